// The public gallery: everyone's public files, no login needed; the files grid read-only (the lightbox
// shows the links, no owner controls, no selection).
import { api, call } from '../api/client.ts';
import { FileGrid } from '../file-grid.tsx';
import { Page, usePages } from '../ui.tsx';

export function GalleryPage() {
  const gallery = usePages((cursor) =>
    call(api.GET('/api/v1/gallery', { params: { query: { limit: '60', ...(cursor ? { cursor } : {}) } } })),
  );
  return (
    <Page title="Public gallery">
      <FileGrid list={gallery} label="Public files" mode="gallery" empty="Nothing public yet." />
    </Page>
  );
}
