// The public gallery: everyone's public files, no login needed.
import { api, call } from '../api/client.ts';
import { CardGrid, formatTime, Page, usePages } from '../ui.tsx';
import { Thumbnail } from './files.tsx';

export function GalleryPage() {
  const gallery = usePages((cursor) =>
    call(api.GET('/api/v1/gallery', { params: { query: { limit: '60', ...(cursor ? { cursor } : {}) } } })),
  );
  return (
    <Page title="Public gallery">
      <CardGrid list={gallery} label="Public files" empty="Nothing public yet.">
        {(file) => (
          <li class="card" key={file.id}>
            <Thumbnail file={file} />
            <p class="meta">{formatTime(file.created_at)}</p>
          </li>
        )}
      </CardGrid>
    </Page>
  );
}
