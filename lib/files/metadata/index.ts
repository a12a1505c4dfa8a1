// Removes privacy-relevant metadata (EXIF with GPS, XMP, IPTC, comments) from an upload without touching
// its pixels: one entry point, one stripper per container.

import { stripAvif } from './avif.ts';
import { stripGif } from './gif.ts';
import { stripIco } from './ico.ts';
import { stripJpeg } from './jpeg.ts';
import { stripPng } from './png.ts';
import { type ImageKind, MalformedImage, refused, type StripResult, unchanged } from './types.ts';
import { stripWebp } from './webp.ts';

const NAMES: Readonly<Record<ImageKind, string>> = {
  jpeg: 'JPEG',
  png: 'PNG',
  webp: 'WebP',
  avif: 'AVIF',
  gif: 'GIF',
  bmp: 'BMP',
  ico: 'ICO',
};

/**
 * The image without its metadata, or why it is left as it is, or why it is refused. Pure, never throws,
 * linear in the size of `bytes`; the input is never modified. `kind` is the sniffed kind (sniffImage).
 */
export function stripMetadata(bytes: Buffer, kind: ImageKind): StripResult {
  try {
    switch (kind) {
      case 'jpeg':
        return stripJpeg(bytes);
      case 'png':
        return stripPng(bytes);
      case 'webp':
        return stripWebp(bytes);
      case 'avif':
        return stripAvif(bytes);
      case 'gif':
        return stripGif(bytes);
      case 'bmp':
        return unchanged('BMP is not rewritten: it has no metadata container');
      case 'ico':
        return stripIco(bytes);
      default:
        return unchanged(`${String(kind)} is not rewritten`);
    }
  } catch (error) {
    // Readers throw MalformedImage on a broken container; anything else is a bug here, and failing closed
    // (a refusal) keeps metadata from being stored unnoticed.
    const name = NAMES[kind] ?? String(kind);
    return refused(`${name}: ${error instanceof MalformedImage ? error.message : 'could not be parsed'}`);
  }
}
