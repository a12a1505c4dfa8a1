// PNG: drops the text, time and EXIF chunks whole (keeping the orientation in a minimal eXIf), and every
// ancillary chunk it does not know (C2PA's caBX, private chunks: any of them can carry a position), so
// every chunk left keeps its own CRC; critical, colour, physical and animation chunks stay as they are. An
// unknown critical chunk is refused: no decoder shows such a file, and its content would be stored unread.
import { crc32 } from 'node:zlib';
import { keepsOrientation, orientationTiff, readOrientation } from './exif.ts';
import { Splice } from './splice.ts';
import { code, countPiece, refused, type StripResult } from './types.ts';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MAX_CHUNK_LENGTH = 0x7fffffff; // PNG's own limit (2^31 - 1)

// Chunk types compared as numbers: no string per chunk, however many chunks a file has.
const IHDR = code('IHDR');
const IDAT = code('IDAT');
const IEND = code('IEND');
const CGBI = code('CgBI');
const EXIF = code('eXIf');
// eXIf is the registered EXIF chunk; exIf and zxIf are the names of the drafts some tools still write.
const EXIF_CHUNKS = new Map(['eXIf', 'exIf', 'zxIf'].map((type) => [code(type), type]));
const TEXT_CHUNKS = new Map(['tEXt', 'zTXt', 'iTXt', 'tIME'].map((type) => [code(type), type]));
// Ancillary chunks that decide how the pixels show (transparency, colour, size, animation, HDR): kept.
const KEPT_ANCILLARY = new Set(
  [
    'tRNS',
    'gAMA',
    'cHRM',
    'sRGB',
    'iCCP',
    'sBIT',
    'bKGD',
    'hIST',
    'pHYs',
    'sPLT',
    'acTL',
    'fcTL',
    'fdAT',
    'cICP',
    'mDCV',
    'mDCv',
    'cLLI',
    'cLLi',
  ].map(code),
);
const CRITICAL = new Set(['IHDR', 'PLTE', 'IDAT', 'IEND', 'CgBI'].map(code));
const C2PA = code('caBX');
/** Bit 5 of a chunk type's first byte: set (lower case) on ancillary chunks. */
const ANCILLARY_BIT = 0x20_00_00_00;

function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

function isLetter(byte: number): boolean {
  return (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
}

export function stripPng(bytes: Buffer): StripResult {
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE))
    return refused('PNG: no PNG signature');
  const out = new Splice(bytes);
  out.keep(0, 8);
  let at = 8;
  let headerSeen = false;
  let imageData = false;
  let exifSeen = false;
  let pieces = 0;
  for (;;) {
    pieces = countPiece(pieces);
    if (at + 12 > bytes.length) {
      return refused(at === bytes.length ? 'PNG: no IEND chunk' : 'PNG: truncated chunk');
    }
    const length = bytes.readUInt32BE(at);
    if (length > MAX_CHUNK_LENGTH) return refused(`PNG: chunk length ${length} at byte ${at}`);
    const data = at + 8;
    const end = data + length + 4;
    if (end > bytes.length) return refused(`PNG: chunk at byte ${at} runs past the end`);
    for (let index = at + 4; index < data; index += 1) {
      if (!isLetter(bytes[index]!)) return refused(`PNG: invalid chunk type at byte ${at}`);
    }
    const type = bytes.readUInt32BE(at + 4);
    if (!headerSeen) {
      // Apple's CgBI variant puts its own chunk before IHDR.
      const appleFirst = type === CGBI && at === 8;
      if (!appleFirst && (type !== IHDR || length !== 13)) return refused('PNG: no IHDR chunk first');
      headerSeen = !appleFirst;
    }
    if (type === IEND) {
      if (!imageData) return refused('PNG: no IDAT chunk');
      out.keep(at, end);
      if (end < bytes.length) out.note('data after IEND');
      return { kind: 'stripped', bytes: out.build(), removed: out.removed };
    }
    if (type === IDAT) imageData = true;
    const text = TEXT_CHUNKS.get(type);
    const exif = EXIF_CHUNKS.get(type);
    if (text !== undefined) out.note(text);
    else if (exif !== undefined) {
      const first = !exifSeen;
      exifSeen = true;
      const orientation = first && type === EXIF ? readOrientation(bytes, data, data + length) : undefined;
      if (keepsOrientation(orientation)) {
        const minimal = pngChunk('eXIf', orientationTiff(orientation)); // all a stripped PNG keeps of EXIF
        if (end - at === minimal.length && bytes.subarray(at, end).equals(minimal)) out.keep(at, end);
        else {
          out.insert(minimal);
          out.note(exif);
        }
      } else out.note(exif);
    } else if ((type & ANCILLARY_BIT) === 0) {
      if (!CRITICAL.has(type)) return refused(`PNG: unknown critical chunk at byte ${at}`);
      out.keep(at, end);
    } else if (KEPT_ANCILLARY.has(type)) out.keep(at, end);
    else out.note(type === C2PA ? 'caBX (C2PA)' : 'unknown ancillary chunk');
    at = end;
  }
}
