// What an upload really is, from its bytes (never the client's header or name), and whether it is allowed.
import type { fileTypeFromBuffer as FileTypeFromBuffer } from 'file-type/core';
import { IMAGE_KINDS, type ImageKind } from '#lib/files/metadata/types.ts';
import { UploadError } from './errors.ts';

export interface SniffedType {
  mimeType: string;
  ext: string;
  kind: ImageKind;
}

/** The media type and stored extension of each kind; `jpg` is the extension people expect for JPEG. */
export const KIND_INFO: Readonly<Record<ImageKind, { mimeType: string; ext: string }>> = {
  png: { mimeType: 'image/png', ext: 'png' },
  jpeg: { mimeType: 'image/jpeg', ext: 'jpg' },
  gif: { mimeType: 'image/gif', ext: 'gif' },
  webp: { mimeType: 'image/webp', ext: 'webp' },
  avif: { mimeType: 'image/avif', ext: 'avif' },
  bmp: { mimeType: 'image/bmp', ext: 'bmp' },
  ico: { mimeType: 'image/x-icon', ext: 'ico' },
};

// file-type's extension -> our kind. An animated PNG (apng) is still a PNG file that every PNG reader
// shows, and `png` in the allow-list is what an operator means by it, so it is stored as image/png.
// `cur` (cursor) shares ICO's container but is not an icon, so it stays out.
const KIND_BY_DETECTED_EXT: Readonly<Record<string, ImageKind>> = {
  png: 'png',
  apng: 'png',
  jpg: 'jpeg',
  gif: 'gif',
  webp: 'webp',
  avif: 'avif',
  bmp: 'bmp',
  ico: 'ico',
};

const KIND_BY_MIME_TYPE: Readonly<Record<string, ImageKind>> = {
  'image/png': 'png',
  'image/apng': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/bmp': 'bmp',
  'image/x-ms-bmp': 'bmp',
  'image/x-icon': 'ico',
  'image/vnd.microsoft.icon': 'ico',
};

/**
 * The kind a declared media type stands for (presign requests declare one before any bytes exist);
 * undefined when it is not one of ours. Parameters and case are ignored.
 */
export function kindFromMimeType(mimeType: string): ImageKind | undefined {
  const bare = mimeType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return Object.hasOwn(KIND_BY_MIME_TYPE, bare) ? KIND_BY_MIME_TYPE[bare] : undefined;
}

/** The allow-list as kinds; `jpg` is accepted as a spelling of `jpeg`, anything unknown is dropped. */
export function normalizeAllowed(allowed: readonly string[]): ImageKind[] {
  const kinds = new Set<ImageKind>();
  for (const entry of allowed) {
    const name = entry.trim().toLowerCase();
    const kind = name === 'jpg' ? 'jpeg' : name;
    if ((IMAGE_KINDS as readonly string[]).includes(kind)) kinds.add(kind as ImageKind);
  }
  return [...kinds];
}

const SVG_MIME_TYPE = 'image/svg+xml';

export function notAllowedError(detected: string, allowed: readonly string[]): UploadError {
  const list = normalizeAllowed(allowed);
  // SVG is never accepted, whatever the allow-list: it is a document that can carry scripts, which would
  // run on this site's origin for everyone who opens the file (a stored XSS).
  const svg = isSvgType(detected)
    ? ': SVG can carry scripts that would run on this site (a stored-XSS risk), so it is never accepted; convert it to PNG or WebP'
    : '';
  return new UploadError(
    'unsupported_media_type',
    `file: type ${detected} is not allowed${svg}; allowed: ${list.length > 0 ? list.join(', ') : 'none'}`,
  );
}

const isSvgType = (mimeType: string) => mimeType.split(';', 1)[0]?.trim().toLowerCase() === SVG_MIME_TYPE;

/** Whether text bytes are an SVG document (file-type recognises none: SVG is XML text). */
function looksLikeSvg(bytes: Buffer): boolean {
  const head = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return head.startsWith('<') && /<svg[\s>]/i.test(head);
}

// BMP's signature is just the two ASCII letters "BM", so any text starting with them ("BMW ...") would
// pass as an image. A real BMP also has a known DIB header size at offset 14; demand that too.
const BMP_DIB_HEADER_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);

function plausible(kind: ImageKind, bytes: Buffer): boolean {
  if (kind !== 'bmp') return true;
  return bytes.length >= 26 && BMP_DIB_HEADER_SIZES.has(bytes.readUInt32LE(14));
}

// file-type (with its tokenizer, inflate and debug modules) is loaded on the first sniff, not at every cold
// start of the files group, whose other routes never need it. It is installed beside the bundle rather than
// inside it, where V8 would compile it at every cold start (infra/bundling.ts FILE_TYPE_PACKAGE).
let sniffer: Promise<typeof FileTypeFromBuffer> | undefined;
function fileTypeSniffer(): Promise<typeof FileTypeFromBuffer> {
  sniffer ??= import('file-type/core').then(
    (module) => module.fileTypeFromBuffer,
    (error: unknown) => {
      sniffer = undefined;
      throw error;
    },
  );
  return sniffer;
}

/** The sniffed type of `bytes`, or a 415 naming what was found (or `unknown`) and what is allowed. */
export async function sniffImage(bytes: Buffer, allowed: readonly string[]): Promise<SniffedType> {
  const fileTypeFromBuffer = await fileTypeSniffer();
  // file-type only reads the first few kilobytes; a malformed header is "not recognised", not a crash.
  let detected: { ext: string; mime: string } | undefined;
  try {
    detected = await fileTypeFromBuffer(bytes);
  } catch {
    detected = undefined;
  }
  const kind =
    detected !== undefined && Object.hasOwn(KIND_BY_DETECTED_EXT, detected.ext)
      ? KIND_BY_DETECTED_EXT[detected.ext]
      : undefined;
  if (kind === undefined || !plausible(kind, bytes)) {
    const found = looksLikeSvg(bytes) ? SVG_MIME_TYPE : (detected?.mime ?? 'unknown');
    throw notAllowedError(kind === undefined ? found : 'unknown', allowed);
  }
  if (!normalizeAllowed(allowed).includes(kind)) throw notAllowedError(KIND_INFO[kind].mimeType, allowed);
  return { kind, ...KIND_INFO[kind] };
}
