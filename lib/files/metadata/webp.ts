// WebP (RIFF): drops the EXIF and XMP chunks (keeping the orientation in a minimal EXIF chunk), clears the
// VP8X flags of what went and rewrites the RIFF size; image, alpha, ICC and animation chunks stay as they are.
import { EXIF_IDENTIFIER, keepsOrientation, orientationTiff, readOrientation } from './exif.ts';
import { Splice } from './splice.ts';
import { code, countPiece, refused, type StripResult } from './types.ts';

const EXIF_FLAG = 0x08;
const XMP_FLAG = 0x04;
const VP8X_FLAGS_OFFSET = 20; // RIFF header (12) + chunk header (8)

// Chunk ids compared as numbers: no string per chunk, however many chunks a file has.
const VP8X = code('VP8X');
const VP8 = code('VP8 ');
const VP8L = code('VP8L');
const ANMF = code('ANMF');
const EXIF = code('EXIF');
const XMP = code('XMP ');

function riffChunk(fourcc: string, data: Buffer): Buffer {
  const padded = data.length + (data.length & 1);
  const out = Buffer.alloc(8 + padded);
  out.write(fourcc, 0, 'latin1');
  out.writeUInt32LE(data.length, 4);
  data.copy(out, 8);
  return out;
}

export function stripWebp(bytes: Buffer): StripResult {
  if (
    bytes.length < 12 ||
    bytes.toString('latin1', 0, 4) !== 'RIFF' ||
    bytes.toString('latin1', 8, 12) !== 'WEBP'
  ) {
    return refused('WebP: no RIFF WEBP header');
  }
  const riffEnd = 8 + bytes.readUInt32LE(4);
  if (riffEnd > bytes.length) return refused('WebP: RIFF size runs past the end');
  const body = new Splice(bytes);
  let at = 12;
  let extended = false;
  let imageData = false;
  let exifSeen = false;
  let exifKept = false;
  let pieces = 0;
  while (at < riffEnd) {
    pieces = countPiece(pieces);
    if (at + 8 > riffEnd) return refused('WebP: truncated chunk header');
    const fourcc = bytes.readUInt32BE(at);
    const size = bytes.readUInt32LE(at + 4);
    const dataEnd = at + 8 + size;
    if (dataEnd > riffEnd) {
      return refused(`WebP: chunk ${JSON.stringify(bytes.toString('latin1', at, at + 4))} runs past the end`);
    }
    // Chunks are padded to an even size; some writers leave the last pad byte out.
    const end = Math.min(dataEnd + (size & 1), riffEnd);
    if (at === 12) {
      if (fourcc === VP8X) {
        if (size < 10) return refused('WebP: VP8X chunk too short');
        extended = true;
      } else if (fourcc !== VP8 && fourcc !== VP8L) return refused('WebP: no VP8, VP8L or VP8X chunk first');
    }
    if (fourcc === VP8 || fourcc === VP8L || fourcc === ANMF) imageData = true;
    if (fourcc === XMP) body.note('XMP');
    else if (fourcc === EXIF) {
      const first = !exifSeen;
      exifSeen = true;
      let tiff = at + 8;
      if (dataEnd - tiff >= 6 && bytes.subarray(tiff, tiff + 6).equals(EXIF_IDENTIFIER)) tiff += 6;
      const orientation = first && extended ? readOrientation(bytes, tiff, dataEnd) : undefined;
      if (keepsOrientation(orientation)) {
        exifKept = true;
        const minimal = riffChunk('EXIF', orientationTiff(orientation)); // all a stripped WebP keeps of EXIF
        if (end - at === minimal.length && bytes.subarray(at, end).equals(minimal)) body.keep(at, end);
        else {
          body.insert(minimal);
          body.note('EXIF');
        }
      } else body.note('EXIF');
    } else body.keep(at, end);
    at = end;
  }
  if (!imageData) return refused('WebP: no image data chunk');
  if (riffEnd < bytes.length) body.note('data after the RIFF chunk');
  const flags = extended ? bytes[VP8X_FLAGS_OFFSET]! : 0;
  const newFlags = extended ? (flags & ~(EXIF_FLAG | XMP_FLAG)) | (exifKept ? EXIF_FLAG : 0) : 0;
  const removed = body.removed;
  if (removed.length === 0 && flags === newFlags) return { kind: 'stripped', bytes, removed };
  const rest = body.build();
  const out = Buffer.allocUnsafe(12 + rest.length);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(4 + rest.length, 4);
  out.write('WEBP', 8, 'latin1');
  rest.copy(out, 12);
  if (extended) out[VP8X_FLAGS_OFFSET] = newFlags;
  return { kind: 'stripped', bytes: out, removed };
}
