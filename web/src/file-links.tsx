// A file's pictures and links as the console draws them: the link formats, the presets of its record's
// thumbnail URL (docs/IMAGES.md "Presets and signatures"), and the picture itself, never the original but
// for a file held for review: its links answer 451 to everyone, so its owner and administrators see its
// bytes through the content route (with the session), as a blob URL.
import { useEffect, useState } from 'preact/hooks';
import { api, type DataOf } from './api/client.ts';

/** A file of the owner's listing; the back office's items add their owner. */
export type FileItem = DataOf<'/api/v1/files', 'get'>['items'][number];
export type GridFile = FileItem & { owner_id?: string; owner_username?: string | null };

export const LINK_FORMATS = {
  URL: (file: { url: string }) => file.url,
  Markdown: (file: { url: string; original_name: string }) =>
    `![${file.original_name.replace(/[[\]]/g, '')}](${file.url})`,
  HTML: (file: { url: string; original_name: string }) =>
    `<img src="${file.url}" alt="${file.original_name.replace(/[<>&"]/g, '')}">`,
  BBCode: (file: { url: string }) => `[img]${file.url}[/img]`,
} as const;
export type LinkFormat = keyof typeof LINK_FORMATS;

/** The permission values in the console's words (the API's `private` is reachable by its link). */
export const PERMISSION_LABELS = { private: 'Unlisted', public: 'Public (in the gallery)' } as const;
export const PERMISSION_HINT = 'Unlisted: anyone with the link can open it; it is not in the gallery.';

/**
 * The record's thumbnail URL (`?p=thumb`) as another preset (`?p=medium`), so the base and the rest of the
 * query stay the service's; undefined when the URL names no preset.
 */
export function asPreset(thumbnail: string, preset: string): string | undefined {
  const named = /([?&]p=)[a-z0-9_-]+(?=&|$)/;
  return named.test(thumbnail)
    ? thumbnail.replace(named, (_, name: string) => `${name}${preset}`)
    : undefined;
}

/** The type a placeholder names, from the stored extension (`BMP`, `ICO`). */
export function typeLabel(file: Pick<FileItem, 'key'>): string {
  return file.key.slice(file.key.lastIndexOf('.') + 1).toUpperCase();
}

type Drawable = Pick<FileItem, 'id' | 'thumbnail' | 'key' | 'original_name' | 'moderation'>;

export const isHeld = (file: Pick<FileItem, 'moderation'>) => file.moderation?.state === 'held';

/** The file's bytes through `GET /api/v1/files/{id}/content` as a blob URL (undefined until loaded). */
function useContentUrl(id: string): string | undefined {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    let made: string | undefined;
    let live = true;
    api
      .GET('/api/v1/files/{id}/content', { params: { path: { id } }, parseAs: 'blob' })
      .then(({ data, response }) => {
        if (!live || !response.ok || !data) return;
        made = URL.createObjectURL(data);
        setUrl(made);
      })
      .catch(() => undefined);
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [id]);
  return url;
}

/** A held file's picture, through the content route. */
function HeldPicture({ file, large = false }: { file: Drawable; large?: boolean }) {
  const url = useContentUrl(file.id);
  return (
    <img
      class={large ? 'lightbox-picture' : undefined}
      decoding="async"
      {...(large ? {} : { width: 240, height: 240 })}
      alt={file.original_name}
      {...(url ? { src: url } : {})}
    />
  );
}

/** The tiles a grid's first screen shows on a phone (three a row) and more on a laptop: not lazy. */
export const FIRST_ROW = 6;

/**
 * A grid's picture of a file: the record's thumbnail (a small rendition, so a page of 12-megapixel photos
 * loads kilobytes, not megabytes), lazily, with the 2x rendition for dense screens; or a tile naming the
 * type when the renderer cannot read it (BMP, ICO: `thumbnail` is null). Never the original itself.
 * `elementtiming` lets a page measure when the first one was painted.
 */
export function Thumbnail({ file, firstRow = false }: { file: Drawable; firstRow?: boolean }) {
  const [failed, setFailed] = useState<string>();
  if (isHeld(file)) return <HeldPicture file={file} />;
  if (file.thumbnail === null) return <TypeTile file={file} />;
  if (failed === file.thumbnail) return <FailedTile file={file} src={failed} />;
  // `small` is twice the thumbnail's 480 pixels.
  const double = asPreset(file.thumbnail, 'small');
  return (
    // loading before the sources: a lazy image fetches nothing until it nears the viewport. The first row
    // is on screen at once and holds the page's largest paint: fetched at once, the very first one first.
    <img
      loading={firstRow ? 'eager' : 'lazy'}
      {...(firstRow ? { fetchpriority: 'high' } : {})}
      decoding="async"
      width={240}
      height={240}
      alt={file.original_name}
      elementtiming="thumbnail"
      // Widths, not densities: a phone's tile is a third of the screen (the 480-wide thumbnail is plenty at
      // three device pixels to one), a laptop's about 16rem (the 960-wide one on a dense screen).
      {...(double
        ? { srcset: `${file.thumbnail} 480w, ${double} 960w`, sizes: '(max-width: 40rem) 34vw, 16rem' }
        : {})}
      src={file.thumbnail}
      onError={() => setFailed(file.thumbnail ?? undefined)}
    />
  );
}

/** The lightbox's picture: the 1200-wide `medium` preset (`large`, 1920, on dense screens), never the original. */
export function LargePicture({ file }: { file: Drawable }) {
  const [failed, setFailed] = useState<string>();
  if (isHeld(file)) return <HeldPicture file={file} large />;
  if (file.thumbnail === null) return <TypeTile file={file} />;
  const large = asPreset(file.thumbnail, 'medium') ?? file.thumbnail;
  if (failed === large) return <FailedTile file={file} src={large} />;
  const double = asPreset(file.thumbnail, 'large');
  return (
    <img
      class="lightbox-picture"
      decoding="async"
      alt={file.original_name}
      {...(double ? { srcset: `${large} 1x, ${double} 2x` } : {})}
      src={large}
      onError={() => setFailed(large)}
    />
  );
}

function TypeTile({ file }: { file: Drawable }) {
  return (
    <span
      class="thumb-placeholder"
      role="img"
      aria-label={`${file.original_name} (${typeLabel(file)}, no preview)`}
    >
      {typeLabel(file)}
    </span>
  );
}

/**
 * A picture that did not load says so, and where it was asked for: an image host this page cannot reach
 * (or may not load from) is otherwise a row of silent broken images.
 */
function FailedTile({ file, src }: { file: Drawable; src: string }) {
  const where = new URL(src, location.href).host;
  return (
    <span class="thumb-placeholder thumb-failed" role="img" aria-label={`${file.original_name}: not loaded`}>
      Image did not load from {where}
    </span>
  );
}
