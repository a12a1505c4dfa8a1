// A file's pictures and links as the console draws them: the link formats, the renditions of its record's
// thumbnail URL (docs/IMAGES.md: widths from `images.widths`), and the picture itself, never the original.
import type { DataOf } from './api/client.ts';

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
 * The record's thumbnail URL at another width (`w=480` -> `w=1200`), so the base and the rest of the query
 * stay the service's; undefined when the URL names no width. The width must be one of `images.widths`.
 */
export function atWidth(thumbnail: string, width: number): string | undefined {
  const named = /([?&]w=)(\d+)(?=&|$)/;
  return named.test(thumbnail) ? thumbnail.replace(named, (_, name: string) => `${name}${width}`) : undefined;
}

/**
 * The record's thumbnail at twice its width (`w=480` -> `w=960`, both in the default `images.widths`), for
 * screens of two device pixels per CSS pixel. Undefined when the URL names no width.
 */
export function doubleWidthOf(thumbnail: string): string | undefined {
  const width = /[?&]w=(\d+)(?=&|$)/.exec(thumbnail)?.[1];
  return width === undefined ? undefined : atWidth(thumbnail, Number(width) * 2);
}

/** The type a placeholder names, from the stored extension (`BMP`, `ICO`). */
export function typeLabel(file: Pick<FileItem, 'key'>): string {
  return file.key.slice(file.key.lastIndexOf('.') + 1).toUpperCase();
}

type Drawable = Pick<FileItem, 'thumbnail' | 'key' | 'original_name'>;

/**
 * A grid's picture of a file: the record's thumbnail (a small rendition, so a page of 12-megapixel photos
 * loads kilobytes, not megabytes), lazily, with the 2x rendition for dense screens; or a tile naming the
 * type when the renderer cannot read it (BMP, ICO: `thumbnail` is null). Never the original itself.
 * `elementtiming` lets a page measure when the first one was painted.
 */
export function Thumbnail({ file }: { file: Drawable }) {
  if (file.thumbnail === null) return <TypeTile file={file} />;
  const double = doubleWidthOf(file.thumbnail);
  return (
    // loading before the sources: a lazy image fetches nothing until it nears the viewport.
    <img
      loading="lazy"
      decoding="async"
      width={240}
      height={240}
      alt={file.original_name}
      elementtiming="thumbnail"
      {...(double ? { srcset: `${file.thumbnail} 1x, ${double} 2x` } : {})}
      src={file.thumbnail}
    />
  );
}

/** Widths of the lightbox's picture (both in the default `images.widths`). */
const LARGE_WIDTH = 1200;
const LARGE_DOUBLE_WIDTH = 1920;

/** The lightbox's picture: a 1200-wide rendition (1920 on dense screens), never the original. */
export function LargePicture({ file }: { file: Drawable }) {
  if (file.thumbnail === null) return <TypeTile file={file} />;
  const large = atWidth(file.thumbnail, LARGE_WIDTH) ?? file.thumbnail;
  const double = atWidth(file.thumbnail, LARGE_DOUBLE_WIDTH);
  return (
    <img
      class="lightbox-picture"
      decoding="async"
      alt={file.original_name}
      {...(double ? { srcset: `${large} 1x, ${double} 2x` } : {})}
      src={large}
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
