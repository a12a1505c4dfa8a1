// My files: usage, the uploader (uploader.tsx) and the files grid (file-grid.tsx: thumbnails, the lightbox with
// links in four formats, visibility, album, tags, share, delete; bulk actions), filtered by a tag or searched
// by the beginning of a name, and the trash (trash.tsx).
import { useState } from 'preact/hooks';
import { api, call, FIRST_100 } from '../api/client.ts';
import { FileGrid } from '../file-grid.tsx';
import { Trash } from '../trash.tsx';
import { Page, useLoad, usePages } from '../ui.tsx';
import { Uploader } from '../uploader.tsx';
import { Usage } from '../usage.tsx';

type Filter = { tag: string } | { q: string } | undefined;

export function FilesPage() {
  const [filter, setFilter] = useState<Filter>(undefined);
  const files = usePages((cursor) =>
    call(
      api.GET('/api/v1/files', {
        params: { query: { limit: '60', ...filter, ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  const albums = useLoad(() => call(api.GET('/api/v1/albums', FIRST_100)));
  return (
    <Page title="My files">
      <Usage key={files.version} />
      <Uploader onUploaded={files.refresh} />
      <h2>Files</h2>
      <SearchForm
        filter={filter}
        onFilter={(next) => {
          setFilter(next);
          files.refresh();
        }}
      />
      <FileGrid
        list={files}
        label={filter ? 'Files found' : 'My files'}
        mode="owner"
        empty={filter ? 'No file matches.' : 'No files yet.'}
        hint={filter ? undefined : 'Upload some above: choose, drop or paste them.'}
        albums={albums.data?.items}
      />
      <Trash version={files.version} onRestored={files.refresh} />
    </Page>
  );
}

function SearchForm({ filter, onFilter }: { filter: Filter; onFilter: (filter: Filter) => void }) {
  const [by, setBy] = useState<'q' | 'tag'>('q');
  const [typed, setTyped] = useState('');
  return (
    <form
      class="inline"
      aria-label="Find files"
      onSubmit={(event) => {
        event.preventDefault();
        const text = typed.trim();
        onFilter(text === '' ? undefined : by === 'q' ? { q: text } : { tag: text });
      }}
    >
      <div class="field">
        <label for="files-search-by">Find by</label>
        <select
          id="files-search-by"
          value={by}
          onChange={(event) => setBy((event.target as HTMLSelectElement).value as 'q' | 'tag')}
        >
          <option value="q">Name begins with</option>
          <option value="tag">Tag</option>
        </select>
      </div>
      <div class="field">
        <label for="files-search">Name or tag</label>
        <input
          id="files-search"
          maxLength={100}
          value={typed}
          onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" class="secondary">
        Find
      </button>
      {filter && (
        <button
          type="button"
          class="link"
          onClick={() => {
            setTyped('');
            onFilter(undefined);
          }}
        >
          Show all files
        </button>
      )}
    </form>
  );
}
