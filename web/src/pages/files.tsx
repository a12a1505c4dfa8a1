// Upload (file picker, drag and drop, paste; progress per file) and my files: thumbnails (renditions,
// never the original), links in four formats, permission, delete.
import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { uploadFile } from '../api/upload.ts';
import {
  CardGrid,
  copyText,
  errorText,
  FormError,
  formatBytes,
  formatTime,
  Page,
  useLoad,
  usePages,
} from '../ui.tsx';
import { ShareForm } from './shares.tsx';

type FileItem = DataOf<'/api/v1/files', 'get'>['items'][number];

interface Transfer {
  id: number;
  name: string;
  progress: number;
  state: 'uploading' | 'done' | 'failed';
  message: string;
}

let nextTransferId = 1;

export const LINK_FORMATS = {
  URL: (file: { url: string }) => file.url,
  Markdown: (file: { url: string; original_name: string }) =>
    `![${file.original_name.replace(/[[\]]/g, '')}](${file.url})`,
  HTML: (file: { url: string; original_name: string }) =>
    `<img src="${file.url}" alt="${file.original_name.replace(/[<>&"]/g, '')}">`,
  BBCode: (file: { url: string }) => `[img]${file.url}[/img]`,
} as const;
type LinkFormat = keyof typeof LINK_FORMATS;

export function Uploader({ onUploaded, albumId }: { onUploaded: () => void; albumId?: string }) {
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const [dragging, setDragging] = useState(false);

  const update = (id: number, change: Partial<Transfer>) =>
    setTransfers((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item)));

  const start = (files: File[]) => {
    for (const file of files) {
      const id = nextTransferId++;
      setTransfers((list) => [
        { id, name: file.name, progress: 0, state: 'uploading', message: '' },
        ...list,
      ]);
      uploadFile(file, (progress) => update(id, { progress }), albumId)
        .then(() => {
          update(id, { progress: 1, state: 'done', message: 'Uploaded' });
          onUploaded();
        })
        .catch((error: unknown) => update(id, { state: 'failed', message: errorText(error) }));
    }
  };

  // Paste anywhere on the page uploads the pasted files (a screenshot from the clipboard, say).
  useEffect(() => {
    const onPaste = (event: ClipboardEvent) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      start(files);
    };
    addEventListener('paste', onPaste);
    return () => removeEventListener('paste', onPaste);
  });

  return (
    <div>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the keyboard and screen readers use the file picker inside it, or paste */}
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          start([...(event.dataTransfer?.files ?? [])]);
        }}
      >
        <p>Drop files here, paste them, or</p>
        <label class="button" for="file-picker">
          Choose files
        </label>
        <input
          id="file-picker"
          class="visually-hidden"
          type="file"
          multiple
          onChange={(event) => {
            const input = event.target as HTMLInputElement;
            start([...(input.files ?? [])]);
            input.value = '';
          }}
        />
      </div>
      {transfers.length > 0 && (
        <ul class="transfers" aria-label="Uploads">
          {transfers.map((transfer) => (
            <li key={transfer.id} class={transfer.state}>
              <span class="name">{transfer.name}</span>
              <progress
                max={100}
                value={Math.round(transfer.progress * 100)}
                aria-label={`Upload of ${transfer.name}`}
              />
              <span role={transfer.state === 'failed' ? 'alert' : 'status'}>
                {transfer.state === 'uploading'
                  ? `${Math.round(transfer.progress * 100)}%`
                  : transfer.message}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What a grid needs of a record to draw it. */
type Drawable = Pick<FileItem, 'url' | 'thumbnail' | 'key' | 'original_name'>;

/**
 * The record's thumbnail at twice its width (`w=480` -> `w=960`, both in the default `images.widths`), for
 * screens of two device pixels per CSS pixel; built from the record's URL, so the base and the rest of the
 * query stay the service's. Undefined when the URL names no width.
 */
export function doubleWidthOf(thumbnail: string): string | undefined {
  const doubled = thumbnail.replace(
    /([?&]w=)(\d+)(?=&|$)/,
    (_, name: string, width: string) => `${name}${Number(width) * 2}`,
  );
  return doubled === thumbnail ? undefined : doubled;
}

/** The type a placeholder names, from the stored extension (`BMP`, `ICO`). */
function typeLabel(file: Drawable): string {
  return file.key.slice(file.key.lastIndexOf('.') + 1).toUpperCase();
}

/**
 * A grid's picture of a file, linking to the original: the record's thumbnail (a small rendition, so a
 * page of 12-megapixel photos loads kilobytes, not megabytes), lazily, or a tile naming the type when the
 * renderer cannot read it (BMP, ICO: `thumbnail` is null). Never the original itself.
 */
export function Thumbnail({ file }: { file: Drawable }) {
  if (file.thumbnail === null) {
    return (
      <a class="thumb" href={file.url}>
        <span
          class="thumb-placeholder"
          role="img"
          aria-label={`${file.original_name} (${typeLabel(file)}, no preview)`}
        >
          {typeLabel(file)}
        </span>
      </a>
    );
  }
  const double = doubleWidthOf(file.thumbnail);
  return (
    <a class="thumb" href={file.url}>
      {/* loading before the sources: a lazy image fetches nothing until it nears the viewport. */}
      <img
        loading="lazy"
        decoding="async"
        width={240}
        height={160}
        alt={file.original_name}
        {...(double ? { srcset: `${file.thumbnail} 1x, ${double} 2x` } : {})}
        src={file.thumbnail}
      />
    </a>
  );
}

/** An album a file can be moved into (the caller's). */
export interface AlbumChoice {
  id: string;
  name: string;
}

export function FileCard({
  file,
  onChange,
  admin = false,
  albums,
}: {
  file: FileItem;
  onChange: () => void;
  admin?: boolean;
  /** The caller's albums: the card then offers to move the file into one, or out of its own. */
  albums?: AlbumChoice[] | undefined;
}) {
  const [format, setFormat] = useState<LinkFormat>('URL');
  const action = useAction(onChange);
  const [confirming, setConfirming] = useState(false);
  const [sharing, setSharing] = useState(false);
  const link = LINK_FORMATS[format](file);

  const path = admin ? '/api/v1/admin/files/{id}' : '/api/v1/files/{id}';
  const params = { path: { id: file.id } };
  const setPermission = (permission: 'private' | 'public') =>
    action.run(() => call(api.PATCH(path, { params, body: { permission } })), `Now ${permission}`);
  const moveTo = (albumId: string) =>
    action.run(
      () => call(api.PATCH('/api/v1/files/{id}', { params, body: { album_id: albumId || null } })),
      albumId
        ? `Moved to ${albums?.find((album) => album.id === albumId)?.name ?? 'the album'}`
        : 'Taken out of its album',
    );

  return (
    <li class="card">
      <Thumbnail file={file} />
      <h3 class="name" title={file.original_name}>
        {file.original_name}
      </h3>
      <p class="meta">
        {formatBytes(file.size)}
        {file.width ? ` · ${file.width}×${file.height}` : ''} · {formatTime(file.created_at)}
      </p>
      <div class="field">
        <label for={`perm-${file.id}`}>Permission</label>
        <select
          id={`perm-${file.id}`}
          value={file.permission}
          onChange={(event) =>
            setPermission((event.target as HTMLSelectElement).value as 'private' | 'public')
          }
        >
          <option value="private">Private</option>
          <option value="public">Public (in the gallery)</option>
        </select>
      </div>
      {albums && (
        <div class="field">
          <label for={`album-${file.id}`}>Album</label>
          <select
            id={`album-${file.id}`}
            value={file.album_id ?? ''}
            onChange={(event) => moveTo((event.target as HTMLSelectElement).value)}
          >
            <option value="">No album</option>
            {albums.map((album) => (
              <option key={album.id} value={album.id}>
                {album.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="field">
        <label for={`format-${file.id}`}>Link as</label>
        <select
          id={`format-${file.id}`}
          value={format}
          onChange={(event) => setFormat((event.target as HTMLSelectElement).value as LinkFormat)}
        >
          {Object.keys(LINK_FORMATS).map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
        <input
          class="link-text"
          readOnly
          value={link}
          aria-label={`${format} link of ${file.original_name}`}
          onFocus={(event) => (event.target as HTMLInputElement).select()}
        />
      </div>
      <div class="actions">
        <button
          type="button"
          onClick={async () =>
            action.say((await copyText(link)) ? `${format} copied` : 'Select the link and copy it')
          }
        >
          Copy
        </button>
        {confirming ? (
          <button
            type="button"
            class="danger"
            onClick={() => action.run(() => call(api.DELETE(path, { params })), 'Deleted')}
          >
            Confirm delete
          </button>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Delete
          </button>
        )}
      </div>
      {!admin && (
        // The form is drawn only while open: a page of cards holds no hidden password fields.
        <details
          class="share"
          onToggle={(event) => setSharing((event.currentTarget as HTMLDetailsElement).open)}
        >
          <summary>Share…</summary>
          {sharing && (
            <ShareForm target={{ file_id: file.id }} label={`Share ${file.original_name}`} level={4} />
          )}
        </details>
      )}
      {action.view}
    </li>
  );
}

export function Usage() {
  const usage = useLoad(() => call(api.GET('/api/v1/usage')));
  if (usage.error) return <FormError message={usage.error} />;
  if (!usage.data) return null;
  const { used_bytes, quota_bytes, file_count, plan } = usage.data;
  return (
    <div class="usage">
      <p id="usage-text">
        {formatBytes(used_bytes)} of {formatBytes(quota_bytes)} used in {file_count} files
        {plan ? ` · plan ${plan.name}${plan.expires_at ? ` until ${formatTime(plan.expires_at)}` : ''}` : ''}
      </p>
      {quota_bytes !== null && (
        <progress
          aria-labelledby="usage-text"
          max={quota_bytes || 1}
          value={Math.min(used_bytes, quota_bytes)}
        />
      )}
    </div>
  );
}

export function FilesPage() {
  const files = usePages((cursor) =>
    call(api.GET('/api/v1/files', { params: { query: { limit: '60', ...(cursor ? { cursor } : {}) } } })),
  );
  const albums = useLoad(() => call(api.GET('/api/v1/albums', { params: { query: { limit: '100' } } })));
  return (
    <Page title="My files">
      <Usage key={files.version} />
      <Uploader onUploaded={files.refresh} />
      <h2>Files</h2>
      <CardGrid list={files} label="My files" empty="No files yet.">
        {(file) => (
          <FileCard key={file.id} file={file} onChange={files.refresh} albums={albums.data?.items} />
        )}
      </CardGrid>
    </Page>
  );
}
