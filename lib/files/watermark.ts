// Watermarks by plan (docs/IMAGES.md "Watermarks"): a plan may carry a mark, and every rendition of its
// owners' files of at least the mark's minimum size carries it; their originals are served only through
// such a rendition. The mark is drawn here, in the render process, onto the rendition's pixels: a text as
// SVG (a translucent badge with the text on it), or an image (an uploaded file of the administrator's).
import { createHash } from 'node:crypto';
import type SharpModule from 'sharp';
import type { OutputInfo } from 'sharp';

export const WATERMARK_POSITIONS = [
  'top-left',
  'top-right',
  'bottom-left',
  'bottom-right',
  'center',
] as const;
export type WatermarkPosition = (typeof WATERMARK_POSITIONS)[number];

/** A plan's `watermark`: a text or an image (a stored file's key), where, how opaque, from what size. */
export interface Watermark {
  text?: string;
  /** The record key of an uploaded image (`yyyy/mm/dd/<file>`), drawn instead of a text. */
  image?: string;
  position: WatermarkPosition;
  /** 0..1. */
  opacity: number;
  /** Renditions narrower or lower than this many pixels are not marked. */
  min_size: number;
}

/** What the render process draws: the mark, an image mark's bytes read by the function. */
export type WatermarkSpec = Omit<Watermark, 'image'> & { image?: Uint8Array };

/** A short digest of the mark: written into a marked rendition's stored key, so a changed mark is a new copy. */
export function watermarkVersion(mark: Watermark): string {
  const { text, image, position, opacity, min_size } = mark;
  return createHash('sha256')
    .update(JSON.stringify([text ?? null, image ?? null, position, opacity, min_size]))
    .digest('hex')
    .slice(0, 12);
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The text mark as an SVG badge sized to the rendition: a dark translucent box, the text in white on it. */
function textBadge(text: string, width: number, height: number): Buffer {
  const font = Math.max(10, Math.round(Math.min(width, height) / 14));
  const boxWidth = Math.min(width, Math.round(font * (0.62 * text.length + 1.2)));
  const boxHeight = Math.min(height, Math.round(font * 1.7));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${boxWidth}" height="${boxHeight}">` +
      `<rect width="100%" height="100%" rx="${Math.round(font / 4)}" fill="#000" fill-opacity="0.6"/>` +
      `<text x="50%" y="50%" dominant-baseline="central" text-anchor="middle" font-family="sans-serif" ` +
      `font-size="${font}" fill="#fff">${escapeXml(text)}</text></svg>`,
  );
}

/** The mark's pixels (RGBA, its opacity applied), at most a quarter of the rendition's width for an image. */
async function markPixels(sharp: typeof SharpModule, mark: WatermarkSpec, width: number, height: number) {
  const input = mark.image
    ? await sharp(mark.image)
        .resize({
          width: Math.max(1, Math.round(width / 4)),
          height: Math.max(1, Math.round(height / 4)),
          fit: 'inside',
        })
        .toBuffer()
    : textBadge(mark.text ?? '', width, height);
  const { data, info } = await sharp(input).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  for (let at = 3; at < data.length; at += 4) data[at] = Math.round(data[at]! * mark.opacity);
  return { data, info };
}

/** Where the mark's top-left corner goes: its corner of the rendition, a small margin in, or the centre. */
function placeOf(position: WatermarkPosition, outer: OutputInfo, inner: OutputInfo) {
  const margin = Math.round(Math.min(outer.width, outer.height) / 40);
  const right = outer.width - inner.width - margin;
  const bottom = outer.height - inner.height - margin;
  const centre = { left: (outer.width - inner.width) >> 1, top: (outer.height - inner.height) >> 1 };
  const at = {
    'top-left': { left: margin, top: margin },
    'top-right': { left: right, top: margin },
    'bottom-left': { left: margin, top: bottom },
    'bottom-right': { left: right, top: bottom },
    center: centre,
  }[position];
  return { left: Math.max(0, at.left), top: Math.max(0, at.top) };
}

/** The rendition's raw pixels with the mark drawn on, or as they are below the mark's minimum size. */
export async function withMark(
  sharp: typeof SharpModule,
  raw: { data: Buffer; info: OutputInfo },
  mark: WatermarkSpec,
): Promise<{ data: Buffer; info: OutputInfo }> {
  const { width, height, channels } = raw.info;
  if (width < mark.min_size || height < mark.min_size) return raw;
  const pixels = await markPixels(sharp, mark, width, height);
  return sharp(raw.data, { raw: { width, height, channels } })
    .composite([
      {
        input: pixels.data,
        raw: { width: pixels.info.width, height: pixels.info.height, channels: 4 },
        ...placeOf(mark.position, raw.info, pixels.info),
      },
    ])
    .raw()
    .toBuffer({ resolveWithObject: true });
}
