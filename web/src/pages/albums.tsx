// Albums (docs/DESIGN.md 16): create, list, and one album's page (#/albums?id=…): rename, upload into it,
// its files (the files grid: moved in and out from the lightbox or the selection bar), share it, delete it
// (its files stay).
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, FIRST_100 } from '../api/client.ts';
import { FileGrid } from '../file-grid.tsx';
import { Field, Submit, useForm } from '../form.tsx';
import { navigate, routeParam, useRoute } from '../router.ts';
import { ShareForm } from '../share-form.tsx';
import { FormError, formatTime, ListTable, Page, useLoad, usePages } from '../ui.tsx';
import { Uploader } from '../uploader.tsx';

export function AlbumsPage() {
  const route = useRoute();
  const id = routeParam(route, 'id');
  return id ? <AlbumPage key={id} id={id} /> : <AlbumList />;
}

function AlbumList() {
  const albums = useLoad(() => call(api.GET('/api/v1/albums', FIRST_100)));
  const form = useForm({ name: '', description: '' });
  const action = useAction(albums.reload);

  const create = form.submit(async ({ name, description }) => {
    const album = await call(
      api.POST('/api/v1/albums', { body: { name, ...(description ? { description } : {}) } }),
    );
    form.reset();
    navigate(`/albums?id=${album.id}`);
  });

  return (
    <Page title="Albums">
      <form onSubmit={create} noValidate>
        <Field form={form} name="name" label="Album name" required maxLength={100} />
        <Field form={form} name="description" label="Description (optional)" maxLength={1000} />
        <Submit form={form}>Create album</Submit>
      </form>
      {action.view}
      <h2>Your albums</h2>
      <ListTable
        list={albums}
        items={albums.data?.items}
        columns={['Album', 'Files', 'Updated']}
        actions
        empty="No albums yet."
        hint="Make one with the form above, then upload into it."
        row={(album) => (
          <tr key={album.id}>
            <td>
              <a href={`#/albums?id=${album.id}`}>{album.name}</a>
            </td>
            <td>{album.file_count}</td>
            <td>{formatTime(album.updated_at)}</td>
            <td>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/albums/{id}', byId(album.id)))}
                done={`Album ${album.name} deleted; its files stay in My files`}
              >
                Delete<span class="visually-hidden"> album {album.name}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

function AlbumPage({ id }: { id: string }) {
  const album = useLoad(() => call(api.GET('/api/v1/albums/{id}', byId(id))));
  const albums = useLoad(() => call(api.GET('/api/v1/albums', FIRST_100)));
  const files = usePages((cursor) =>
    call(
      api.GET('/api/v1/files', {
        params: { query: { album_id: id, limit: '60', ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  const form = useForm({ name: '', description: '' });
  const refresh = () => {
    files.refresh();
    void album.reload();
  };

  const rename = form.submit(async ({ name, description }) => {
    await call(
      api.PATCH('/api/v1/albums/{id}', {
        ...byId(id),
        body: { ...(name ? { name } : {}), ...(description ? { description } : {}) },
      }),
    );
    form.reset();
    await Promise.all([album.reload(), albums.reload()]);
  });

  if (album.error) {
    return (
      <Page title="Album">
        <FormError message={album.error} />
        <p>
          <a href="#/albums">All albums</a>
        </p>
      </Page>
    );
  }
  if (!album.data) return <Page title="Album">{null}</Page>;
  const current = album.data;
  return (
    <Page title={`Album ${current.name}`}>
      <p>
        <a href="#/albums">All albums</a> · {current.file_count} files
        {current.description ? ` · ${current.description}` : ''}
      </p>
      <form onSubmit={rename} noValidate class="inline">
        <Field form={form} name="name" label="New name" maxLength={100} />
        <Field form={form} name="description" label="New description" maxLength={1000} />
        <Submit form={form} secondary>
          Rename
        </Submit>
      </form>
      <h2>Upload into this album</h2>
      <Uploader onUploaded={refresh} albumId={id} />
      <h2>Files in this album</h2>
      <FileGrid
        list={files}
        label={`Files of album ${current.name}`}
        mode="owner"
        empty="No files in this album yet."
        hint="Upload into it above, or move files here from My files."
        albums={albums.data?.items}
        onChanged={refresh}
      />
      <ShareForm target={{ album_id: id }} label="Share this album" />
    </Page>
  );
}
