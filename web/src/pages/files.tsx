// My files: usage, the uploader (uploader.tsx) and the files grid (file-grid.tsx: thumbnails, the lightbox with
// links in four formats, visibility, album, share, delete; bulk actions), and the trash (trash.tsx).
import { api, call, FIRST_100 } from '../api/client.ts';
import { FileGrid } from '../file-grid.tsx';
import { Trash } from '../trash.tsx';
import { Page, useLoad, usePages } from '../ui.tsx';
import { Uploader } from '../uploader.tsx';
import { Usage } from '../usage.tsx';

export function FilesPage() {
  const files = usePages((cursor) =>
    call(api.GET('/api/v1/files', { params: { query: { limit: '60', ...(cursor ? { cursor } : {}) } } })),
  );
  const albums = useLoad(() => call(api.GET('/api/v1/albums', FIRST_100)));
  return (
    <Page title="My files">
      <Usage key={files.version} />
      <Uploader onUploaded={files.refresh} />
      <h2>Files</h2>
      <FileGrid
        list={files}
        label="My files"
        mode="owner"
        empty="No files yet."
        hint="Upload some above: choose, drop or paste them."
        albums={albums.data?.items}
      />
      <Trash version={files.version} onRestored={files.refresh} />
    </Page>
  );
}
