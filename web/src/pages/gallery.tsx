// The public gallery: everyone's public files, no login needed.
import { useState } from 'preact/hooks';
import { api, call, type DataOf } from '../api/client.ts';
import { FormError, formatTime, Page, useLoad } from '../ui.tsx';

type GalleryItem = DataOf<'/api/v1/gallery', 'get'>['items'][number];

export function GalleryPage() {
  const first = useLoad(() => call(api.GET('/api/v1/gallery', { params: { query: { limit: '60' } } })));
  const [extra, setExtra] = useState<GalleryItem[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const next = cursor === undefined ? first.data?.next_cursor : cursor;
  const more = async () => {
    if (!next) return;
    const page = await call(api.GET('/api/v1/gallery', { params: { query: { limit: '60', cursor: next } } }));
    setExtra((list) => [...list, ...page.items]);
    setCursor(page.next_cursor);
  };
  const items = [...(first.data?.items ?? []), ...extra];
  return (
    <Page title="Public gallery">
      {first.error && <FormError message={first.error} />}
      {first.data && items.length === 0 && <p>Nothing public yet.</p>}
      <ul class="grid" aria-label="Public files">
        {items.map((file) => (
          <li class="card" key={file.id}>
            <a href={file.url}>
              <img src={file.url} alt={file.original_name} loading="lazy" width={160} height={120} />
            </a>
            <p class="meta">{formatTime(file.created_at)}</p>
          </li>
        ))}
      </ul>
      {next && (
        <button type="button" class="secondary" onClick={more}>
          Load more
        </button>
      )}
    </Page>
  );
}
