// Tiny image fixtures built in code (known sizes, no binary files in git) and a multipart body builder.
import { crc32, deflateSync } from 'node:zlib';

export interface ImageFixture {
  bytes: Buffer;
  width: number;
  height: number;
  /** what the service must report as mime_type */
  mime: string;
  /** the stored extension */
  ext: string;
  kind: 'png' | 'jpeg' | 'gif' | 'webp' | 'avif' | 'bmp' | 'ico';
  /** false when only the headers are real (enough for sniffing and measuring, not for a decoder) */
  decodable: boolean;
}

export function u16le(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16LE(value);
  return out;
}

export function u32le(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

export function u16be(value: number): Buffer {
  const out = Buffer.alloc(2);
  out.writeUInt16BE(value);
  return out;
}

export function u32be(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

export function pngChunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), typeAndData, u32be(crc32(typeAndData))]);
}

/** An 8-bit RGB PNG filled with one colour; CRCs and zlib stream are real, so any decoder reads it. */
export function makePng(width: number, height: number, rgb: [number, number, number] = [255, 0, 0]): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 2, 0, 0, 0])]);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).fill(Buffer.from(rgb))]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * An 8-bit RGB PNG of a 4x4 grid of colours from `seed` over a diagonal gradient: a picture with a layout
 * (its perceptual hash is informative, lib/moderation/perceptual-hash.ts), another for every seed.
 */
export function makePatternPng(width: number, height: number, seed: number): Buffer {
  let state = (seed * 2654435761) >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) & 255;
  };
  const cells = Array.from({ length: 16 }, () => [next(), next(), next()]);
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 2, 0, 0, 0])]);
  const raw = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const cell = cells[Math.floor((y * 4) / height) * 4 + Math.floor((x * 4) / width)]!;
      const shade = Math.floor(((x + y) * 64) / (width + height));
      for (let c = 0; c < 3; c += 1) raw[y * (1 + width * 3) + 1 + x * 3 + c] = (cell[c]! + shade) & 255;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A GIF89a of colour 0 (red). The LZW stream sends a clear code before every pixel, so the code table never
 * grows and the code width stays 3 bits: valid for any decoder, trivially simple to write.
 */
export function makeGif(width: number, height: number): Buffer {
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    u16le(width),
    u16le(height),
    Buffer.from([0x80, 0, 0]), // global colour table of 2 entries, background 0, no aspect
    Buffer.from([255, 0, 0, 255, 255, 255]),
    gifFrame(width, height, 0),
    Buffer.from([0x3b]),
  ]);
}

/**
 * One GIF image of `width` x `height` pixels of palette entry `colour` (0 or 1): its descriptor, then an LZW
 * stream that sends a clear code before every pixel, so the code table never grows and codes stay 3 bits.
 */
function gifFrame(width: number, height: number, colour: 0 | 1): Buffer {
  const clear = 4;
  const end = 5;
  const codes: number[] = [];
  for (let index = 0; index < width * height; index += 1) codes.push(clear, colour);
  codes.push(end);
  const packed: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const code of codes) {
    accumulator |= code << bits;
    bits += 3;
    while (bits >= 8) {
      packed.push(accumulator & 0xff);
      accumulator >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) packed.push(accumulator & 0xff);
  const blocks: Buffer[] = [];
  for (let offset = 0; offset < packed.length; offset += 255) {
    const block = packed.slice(offset, offset + 255);
    blocks.push(Buffer.from([block.length, ...block]));
  }
  return Buffer.concat([
    Buffer.from([0x2c]),
    u16le(0),
    u16le(0),
    u16le(width),
    u16le(height),
    Buffer.from([0, 2]), // no local table; LZW minimum code size 2
    ...blocks,
    Buffer.from([0]),
  ]);
}

function jpegSegment(marker: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, marker]), u16be(payload.length + 2), payload]);
}

/**
 * A baseline greyscale JPEG of mid grey. Quantisation is all ones, each Huffman table holds one symbol
 * (DC category 0, AC end-of-block), so every 8x8 block is the two bits `00` and the scan is a few bytes.
 * `orientation` adds an EXIF APP1 with that orientation tag (6 = rotate 90 degrees clockwise).
 */
export function makeJpeg(width: number, height: number, orientation?: number): Buffer {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const scan: number[] = [];
  const totalBits = blocks * 2;
  for (let bit = 0; bit < totalBits; bit += 8) {
    const used = Math.min(8, totalBits - bit);
    scan.push(0xff >> used); // zeros for the codes, ones as padding
  }
  const segments = [jpegSegment(0xe0, Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]))];
  if (orientation !== undefined) {
    const tiff = Buffer.concat([
      Buffer.from('MM', 'latin1'),
      u16be(42),
      u32be(8), // IFD0 right after the header
      u16be(1), // one entry
      u16be(0x0112), // Orientation
      u16be(3), // SHORT
      u32be(1),
      u16be(orientation),
      u16be(0),
      u32be(0), // no next IFD
    ]);
    segments.push(jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff])));
  }
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    ...segments,
    jpegSegment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    jpegSegment(
      0xc0,
      Buffer.concat([Buffer.from([8]), u16be(height), u16be(width), Buffer.from([1, 1, 0x11, 0])]),
    ),
    jpegSegment(0xc4, Buffer.from([0x00, 1, ...Array<number>(15).fill(0), 0x00])),
    jpegSegment(0xc4, Buffer.from([0x10, 1, ...Array<number>(15).fill(0), 0x00])),
    jpegSegment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    Buffer.from(scan),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/**
 * A lossless WebP (VP8L), fully transparent. The bitstream is the well-known 1x1 transparent WebP's: a
 * one-colour palette and single-symbol prefix codes, so each pixel costs zero bits and the same bits are a
 * valid image of any size once the header says so.
 */
export function makeWebp(width: number, height: number): Buffer {
  const header = u32le(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14) | (1 << 28)); // alpha used
  const payload = Buffer.concat([Buffer.from([0x2f]), header, Buffer.from('071011118888fe07', 'hex')]);
  const chunk = Buffer.concat([Buffer.from('VP8L', 'latin1'), u32le(payload.length), payload]);
  const padded = payload.length % 2 === 1 ? Buffer.concat([chunk, Buffer.from([0])]) : chunk;
  return Buffer.concat([
    Buffer.from('RIFF', 'latin1'),
    u32le(4 + padded.length),
    Buffer.from('WEBP', 'latin1'),
    padded,
  ]);
}

function isoBox(type: string, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([u32be(body.length + 8), Buffer.from(type, 'latin1'), body]);
}

/**
 * The AVIF container headers only (ftyp avif, meta with hdlr pict and an ispe size property): what sniffers
 * and image-size read. There is no AV1 payload, so a decoder would refuse it.
 */
export function makeAvifHeader(width: number, height: number): Buffer {
  const fullBox = Buffer.alloc(4);
  return Buffer.concat([
    isoBox('ftyp', Buffer.from('avif', 'latin1'), u32be(0), Buffer.from('avifmif1miaf', 'latin1')),
    isoBox(
      'meta',
      fullBox,
      isoBox('hdlr', fullBox, u32be(0), Buffer.from('pict', 'latin1'), Buffer.alloc(12), Buffer.from([0])),
      isoBox('iprp', isoBox('ipco', isoBox('ispe', fullBox, u32be(width), u32be(height)))),
    ),
  ]);
}

/** A 24-bit bottom-up BMP of one colour (blue), rows padded to 4 bytes. */
export function makeBmp(width: number, height: number): Buffer {
  const rowSize = Math.ceil((width * 3) / 4) * 4;
  const row = Buffer.alloc(rowSize);
  for (let x = 0; x < width; x += 1) row.set([255, 0, 0], x * 3); // BGR
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  const dib = Buffer.concat([
    u32le(40),
    u32le(width),
    u32le(height),
    u16le(1),
    u16le(24),
    u32le(0),
    u32le(pixels.length),
    u32le(2835),
    u32le(2835),
    u32le(0),
    u32le(0),
  ]);
  return Buffer.concat([
    Buffer.from('BM', 'latin1'),
    u32le(14 + 40 + pixels.length),
    u32le(0),
    u32le(54),
    dib,
    pixels,
  ]);
}

/** An ICO with one PNG-compressed image (valid since Windows Vista and in every browser). */
export function makeIco(width: number, height: number): Buffer {
  const png = makePng(width, height, [0, 128, 0]);
  const entry = Buffer.concat([
    Buffer.from([width & 0xff, height & 0xff, 0, 0]),
    u16le(1),
    u16le(32),
    u32le(png.length),
    u32le(6 + 16),
  ]);
  return Buffer.concat([u16le(0), u16le(1), u16le(1), entry, png]);
}

export const png: ImageFixture = {
  bytes: makePng(3, 2),
  width: 3,
  height: 2,
  mime: 'image/png',
  ext: 'png',
  kind: 'png',
  decodable: true,
};
export const jpeg: ImageFixture = {
  bytes: makeJpeg(5, 3),
  width: 5,
  height: 3,
  mime: 'image/jpeg',
  ext: 'jpg',
  kind: 'jpeg',
  decodable: true,
};
/** Stored 5x3 with EXIF orientation 6: shown (and measured) as 3x5. */
export const jpegRotated: ImageFixture = {
  bytes: makeJpeg(5, 3, 6),
  width: 3,
  height: 5,
  mime: 'image/jpeg',
  ext: 'jpg',
  kind: 'jpeg',
  decodable: true,
};
export const gif: ImageFixture = {
  bytes: makeGif(4, 3),
  width: 4,
  height: 3,
  mime: 'image/gif',
  ext: 'gif',
  kind: 'gif',
  decodable: true,
};
export const webp: ImageFixture = {
  bytes: makeWebp(3, 2),
  width: 3,
  height: 2,
  mime: 'image/webp',
  ext: 'webp',
  kind: 'webp',
  decodable: true,
};
export const avif: ImageFixture = {
  bytes: makeAvifHeader(6, 4),
  width: 6,
  height: 4,
  mime: 'image/avif',
  ext: 'avif',
  kind: 'avif',
  decodable: false,
};
export const bmp: ImageFixture = {
  bytes: makeBmp(3, 2),
  width: 3,
  height: 2,
  mime: 'image/bmp',
  ext: 'bmp',
  kind: 'bmp',
  decodable: true,
};
export const ico: ImageFixture = {
  bytes: makeIco(2, 2),
  width: 2,
  height: 2,
  mime: 'image/x-icon',
  ext: 'ico',
  kind: 'ico',
  decodable: true,
};

/** One fixture per allowed kind, for table-driven tests. */
export const images = { png, jpeg, gif, webp, avif, bmp, ico } as const;

/** Plain text, for "named .png, typed image/png, but not an image". */
export const notAnImage = Buffer.from('hello, this is plain text and not a picture\n', 'utf8');

export interface MultipartPart {
  name: string;
  /** present makes it a file part (as browsers send it, raw UTF-8; quotes and CR/LF percent-encoded) */
  filename?: string;
  /** the part's Content-Type; file parts default to application/octet-stream */
  contentType?: string;
  data: Buffer | string;
}

export interface MultipartBody {
  body: Buffer;
  contentType: string;
  boundary: string;
}

function quoteParam(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A multipart/form-data body as a browser would send it. */
export function buildMultipart(
  parts: MultipartPart[],
  boundary = '----fixtureBoundary7MA4YWxkTrZu0gW',
): MultipartBody {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    let disposition = `Content-Disposition: form-data; name="${quoteParam(part.name)}"`;
    if (part.filename !== undefined) disposition += `; filename="${quoteParam(part.filename)}"`;
    const contentType =
      part.contentType ?? (part.filename !== undefined ? 'application/octet-stream' : undefined);
    const headers =
      contentType === undefined ? disposition : `${disposition}\r\nContent-Type: ${contentType}`;
    pieces.push(Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`, 'utf8'));
    pieces.push(typeof part.data === 'string' ? Buffer.from(part.data, 'utf8') : part.data);
    pieces.push(Buffer.from('\r\n', 'latin1'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
  return { body: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

// ---------------------------------------------------------------------------------------------------------
// Encoded images made with sharp, for the renderer's tests and benches: real encoders' output, decodable,
// with the traits a rendition must handle (orientation, metadata, alpha, animation, colour spaces) and the
// hostile shapes it must refuse. sharp is loaded on first use (most importers want only the hand-built bytes
// above, and loading it costs about 100 ms), and each image is built once per test file.

type SharpModule = typeof import('sharp').default;
let sharpModule: Promise<SharpModule> | undefined;

function loadSharp(): Promise<SharpModule> {
  sharpModule ??= import('sharp').then((module) => module.default);
  return sharpModule;
}

const built = new Map<string, Promise<Buffer>>();

function once(key: string, build: () => Promise<Buffer>): Promise<Buffer> {
  let found = built.get(key);
  if (found === undefined) {
    found = build();
    built.set(key, found);
  }
  return found;
}

/** Side in pixels of the cells of photoPixels' texture: detail that survives a thumbnail's downscale. */
const PHOTO_TEXTURE_CELL = 40;

/**
 * Photo-like RGB pixels: a diagonal gradient, a texture of smooth blotches (random values on a coarse grid,
 * interpolated) and per-pixel grain, so encoders give realistic sizes at full size AND at thumbnail size
 * (grain alone averages away in a downscale, leaving a gradient that compresses to almost nothing).
 */
function photoPixels(width: number, height: number): Buffer {
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13; // xorshift32
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const cell = PHOTO_TEXTURE_CELL;
  const columns = Math.ceil(width / cell) + 1;
  const rows = Math.ceil(height / cell) + 1;
  const grid = new Int16Array(columns * rows * 3);
  for (let i = 0; i < grid.length; i += 1) grid[i] = (next() % 121) - 60;
  // Per column, once: its grid column and its position in the cell.
  const columnOf = new Int32Array(width);
  const tOf = new Float32Array(width);
  for (let x = 0; x < width; x += 1) {
    columnOf[x] = Math.floor(x / cell) * 3;
    tOf[x] = (x % cell) / cell;
  }
  const out = Buffer.allocUnsafe(width * height * 3);
  const clamp = (value: number) => (value < 0 ? 0 : value > 255 ? 255 : value | 0);
  let at = 0;
  for (let y = 0; y < height; y += 1) {
    const gy = Math.floor((y * 200) / height);
    const top = Math.floor(y / cell) * columns * 3;
    const bottom = top + columns * 3;
    const ty = (y % cell) / cell;
    for (let x = 0; x < width; x += 1) {
      const gx = Math.floor((x * 255) / width);
      const c = columnOf[x]!;
      const tx = tOf[x]!;
      const noise = next();
      for (let channel = 0; channel < 3; channel += 1) {
        const upper = grid[top + c + channel]! * (1 - tx) + grid[top + c + 3 + channel]! * tx;
        const lower = grid[bottom + c + channel]! * (1 - tx) + grid[bottom + c + 3 + channel]! * tx;
        const base = channel === 0 ? gx : channel === 1 ? gy : (gx + gy) >> 1;
        const grain = ((noise >>> (channel * 5)) & 31) - 16;
        out[at++] = clamp(base + upper * (1 - ty) + lower * ty + grain);
      }
    }
  }
  return out;
}

/** The pixels of one size, made once: other seeds mark a copy (photoPixels takes half a second at 12 MP). */
const photoBases = new Map<string, Buffer>();

/**
 * Photo-like pixels of `seed`: the size's one texture, with the seed written into the first row's grain
 * (a 32-pixel mark), so every seed gives other bytes while the cost stays one encode.
 */
function seededPhotoPixels(width: number, height: number, seed: number): Buffer {
  const size = `${width}x${height}`;
  let base = photoBases.get(size);
  if (base === undefined) {
    base = photoPixels(width, height);
    photoBases.set(size, base);
  }
  if (seed === 0) return base;
  const copy = Buffer.from(base);
  for (let i = 0; i < Math.min(96, copy.length); i += 1) copy[i] = (seed * 7919 + i * 31) & 255;
  return copy;
}

function photo(format: 'jpeg' | 'webp' | 'avif', width: number, height: number, seed = 0): Promise<Buffer> {
  return once(`photo ${format} ${width}x${height} ${seed}`, async () => {
    const sharp = await loadSharp();
    const image = sharp(seededPhotoPixels(width, height, seed), { raw: { width, height, channels: 3 } });
    if (format === 'jpeg') return image.jpeg({ quality: 85 }).toBuffer();
    if (format === 'webp') return image.webp({ quality: 80 }).toBuffer();
    return image.avif({ quality: 60, effort: 2 }).toBuffer();
  });
}

/**
 * A photo-like JPEG (quality 85): about 2.4 MB at 4000x3000, 4.9 MB at 6000x4000 (24 megapixels), each
 * built in about half a second (then 0.2 s a seed); other seeds, other bytes (the same bytes uploaded
 * twice are one file). Its 480-wide WebP is about
 * 23 KB, as a photo's is.
 */
export function photoJpeg(width: number, height: number, seed = 0): Promise<Buffer> {
  return photo('jpeg', width, height, seed);
}

/** The photo-like image as a lossy WebP. */
export function photoWebp(width: number, height: number): Promise<Buffer> {
  return photo('webp', width, height);
}

/** The photo-like image as an AVIF (AV1 in HEIF), which sharp decodes; `avif` above is headers only. */
export function photoAvif(width: number, height: number): Promise<Buffer> {
  return photo('avif', width, height);
}

/** Red, the colour of the top quarter of jpegWithOrientation6AndGps's stored pixels; the rest is BLUE. */
export const RED = { r: 255, g: 0, b: 0 } as const;
export const BLUE = { r: 0, g: 0, b: 255 } as const;

function solidRows(
  width: number,
  height: number,
  colourOf: (y: number) => { r: number; g: number; b: number },
) {
  const out = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    const { r, g, b } = colourOf(y);
    for (let x = 0; x < width; x += 1) out.set([r, g, b], (y * width + x) * 3);
  }
  return out;
}

/**
 * A JPEG whose stored pixels are `width` x `height` (top quarter RED, the rest BLUE) with EXIF Orientation 6
 * (shown rotated 90 degrees clockwise: `height` wide, `width` high, the red band on the right), a GPS IFD
 * (48.8584 N, 2.2945 E) and an XMP packet; every metadata string holds SECRET (test/support/metadata-images.ts).
 */
export function jpegWithOrientation6AndGps(width: number, height: number): Promise<Buffer> {
  return once(`orientation 6 ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    const { exifTiff, XMP_PACKET } = await import('./metadata-images.ts');
    const band = Math.max(1, Math.floor(height / 4));
    const pixels = solidRows(width, height, (y) => (y < band ? RED : BLUE));
    const base = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 95 })
      .toBuffer();
    const exif = jpegSegment(
      0xe1,
      Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), exifTiff({ orientation: 6, gps: true })]),
    );
    const xmp = jpegSegment(0xe1, Buffer.from(`http://ns.adobe.com/xap/1.0/\0${XMP_PACKET}`, 'utf8'));
    // After the JFIF APP0 when there is one, as cameras write it; else right after SOI.
    const at = base[3] === 0xe0 ? 4 + base.readUInt16BE(4) : 2;
    return Buffer.concat([base.subarray(0, at), exif, xmp, base.subarray(at)]);
  });
}

/** RGBA pixels: the left half opaque RED, the right half fully transparent. */
function halfTransparent(width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 4);
  const half = Math.ceil(width / 2);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < half; x += 1) out.set([RED.r, RED.g, RED.b, 255], (y * width + x) * 4);
  }
  return out;
}

/** A PNG with an alpha channel: the left half opaque red, the right half fully transparent. */
export function pngWithAlpha(width: number, height: number): Promise<Buffer> {
  return once(`png alpha ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    return sharp(halfTransparent(width, height), { raw: { width, height, channels: 4 } })
      .png()
      .toBuffer();
  });
}

/** Frame colours of the animations, in turn; each frame's top-left quarter is transparent. */
const FRAME_COLOURS = [
  [255, 0, 0],
  [0, 160, 0],
  [0, 0, 255],
  [255, 200, 0],
] as const;

/** `frames` frames of `width` x `height` stacked top to bottom, as sharp takes an animation's pixels. */
function animationPixels(width: number, height: number, frames: number): Buffer {
  const out = Buffer.alloc(width * height * frames * 4);
  for (let frame = 0; frame < frames; frame += 1) {
    const [r, g, b] = FRAME_COLOURS[frame % FRAME_COLOURS.length]!;
    for (let y = 0; y < height; y += 1) {
      for (let x = 0; x < width; x += 1) {
        const transparent = x < width / 4 && y < height / 4;
        out.set(transparent ? [0, 0, 0, 0] : [r, g, b, 255], ((frame * height + y) * width + x) * 4);
      }
    }
  }
  return out;
}

/** Delay of every frame of the animations, in milliseconds. */
export const FRAME_DELAY_MS = 100;

function animation(format: 'gif' | 'webp', width: number, height: number, frames: number): Promise<Buffer> {
  return once(`animated ${format} ${width}x${height}x${frames}`, async () => {
    const sharp = await loadSharp();
    const image = sharp(animationPixels(width, height, frames), {
      raw: { width, height: height * frames, channels: 4, pageHeight: height },
    });
    const delay = Array<number>(frames).fill(FRAME_DELAY_MS);
    return format === 'gif'
      ? image.gif({ delay, loop: 0, keepDuplicateFrames: true, effort: 1 }).toBuffer()
      : image.webp({ delay, loop: 0, lossless: true }).toBuffer();
  });
}

/** An animated GIF, looping: `frames` frames of changing colour, the top-left quarter of each transparent. */
export function animatedGif(width: number, height: number, frames: number): Promise<Buffer> {
  return animation('gif', width, height, frames);
}

/** The same animation as a lossless animated WebP. */
export function animatedWebp(width: number, height: number, frames: number): Promise<Buffer> {
  return animation('webp', width, height, frames);
}

/** A CMYK JPEG (no profile) of solid RED, as print workflows export. */
export function cmykJpeg(width: number, height: number): Promise<Buffer> {
  return once(`cmyk ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    return sharp({ create: { width, height, channels: 3, background: RED } })
      .toColourspace('cmyk')
      .jpeg({ quality: 95 })
      .toBuffer();
  });
}

/**
 * A JPEG in Display P3 with its ICC profile, of sRGB RED converted to P3: its stored values are about
 * (234, 51, 35); read through the profile they are sRGB red again.
 */
export function displayP3Jpeg(width: number, height: number): Promise<Buffer> {
  return once(`p3 ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    return sharp({ create: { width, height, channels: 3, background: RED } })
      .withIccProfile('p3')
      .jpeg({ quality: 100 })
      .toBuffer();
  });
}

/** A 16-bit RGB PNG of solid RED. */
export function png16Bit(width: number, height: number): Promise<Buffer> {
  return once(`png16 ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    return sharp({ create: { width, height, channels: 3, background: RED } })
      .toColourspace('rgb16')
      .png()
      .toBuffer();
  });
}

// Hostile inputs: small files that claim or decode to far more than they weigh.

/**
 * A valid PNG of `side` x `side` black pixels (1-bit greyscale), a few tens of KB: 400 megapixels at the
 * default 20000, over sharp's own limit; 16000 (256 megapixels) just under it.
 */
export function decompressionBombPng(side = 20_000): Promise<Buffer> {
  return once(`bomb ${side}`, async () => {
    const header = Buffer.concat([u32be(side), u32be(side), Buffer.from([1, 0, 0, 0, 0])]);
    const rows = Buffer.alloc((1 + Math.ceil(side / 8)) * side); // filter 0, all black
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', header),
      pngChunk('IDAT', deflateSync(rows, { level: 9 })),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
  });
}

/**
 * A valid `side` x `side` 1-bit PNG of noise whose rows repeat every 13 (so it deflates to about 250 KB):
 * 256 megapixels at the default 16000, just under sharp's own limit, and seconds of work to render at
 * 3840 x 3840 (about 9 s to WebP here): the input for a render timeout.
 */
export function slowToRenderPng(side = 16_000): Promise<Buffer> {
  return once(`slow ${side}`, async () => {
    const header = Buffer.concat([u32be(side), u32be(side), Buffer.from([1, 0, 0, 0, 0])]);
    const rowBytes = 1 + Math.ceil(side / 8);
    const period = 13;
    const pattern = pseudoNoise(rowBytes * period);
    for (let row = 0; row < period; row += 1) pattern[row * rowBytes] = 0; // filter type: none
    const rows = Buffer.alloc(rowBytes * side);
    for (let row = 0; row < side; row += period) pattern.copy(rows, row * rowBytes);
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', header),
      pngChunk('IDAT', deflateSync(rows)),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
  });
}

/**
 * A `width` x `height` JPEG of noise (quality 90), the encoders' worst case: at 2880 x 2880 (8.3
 * megapixels, images.avif_max_pixels' default) its AVIF takes about 11 s on one core here, at 4000 x 4000
 * twice that: the input of a slow render that is a real file.
 */
export function noiseJpeg(width: number, height: number): Promise<Buffer> {
  return once(`noise ${width}x${height}`, async () => {
    const sharp = await loadSharp();
    const raw = { width, height, channels: 3 as const };
    return sharp(pseudoNoise(width * height * 3), { raw })
      .jpeg({ quality: 90 })
      .toBuffer();
  });
}

/** Deterministic noise bytes (xorshift32). */
function pseudoNoise(length: number): Buffer {
  const out = Buffer.alloc(length);
  let state = 0x2545f491;
  for (let at = 0; at < length; at += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[at] = state & 0xff;
  }
  return out;
}

/**
 * A file whose header claims a huge size over a few bytes of data: a PNG of 65535 x 65535 (valid chunks, a
 * tiny IDAT) or a JPEG of 65500 x 65500, libjpeg's largest (makeJpeg's 8x8 with its frame header rewritten).
 */
export function hugeDimensionsHeader(format: 'png' | 'jpeg' = 'png'): Buffer {
  if (format === 'png') {
    const header = Buffer.concat([u32be(65535), u32be(65535), Buffer.from([8, 2, 0, 0, 0])]);
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', header),
      pngChunk('IDAT', deflateSync(Buffer.alloc(64))),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
  }
  const jpeg = Buffer.from(makeJpeg(8, 8));
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  jpeg.writeUInt16BE(65500, sof + 5); // height
  jpeg.writeUInt16BE(65500, sof + 7); // width
  return jpeg;
}

/** The first `fraction` of `bytes` (a copy): a file cut off in transit or by a failed upload. */
export function truncated(bytes: Buffer, fraction = 0.5): Buffer {
  return Buffer.from(bytes.subarray(0, Math.floor(bytes.length * fraction)));
}

/**
 * A GIF (4x3) whose trailer is followed by a whole PNG: it reads as a GIF, whatever name it is stored under;
 * named .png, it is a polyglot whose real format is not its name's.
 */
export function polyglot(): Buffer {
  return Buffer.concat([makeGif(4, 3), makePng(4, 3)]);
}

/**
 * An animated GIF of `frames` frames of `width` x `height` (default 1x1), alternating red and white, 10 ms
 * each, looping: tiny on disk and slow to decode whole. Written byte by byte, so 5,000 frames take
 * milliseconds to build.
 */
export function gifWithManyFrames(frames: number, width = 1, height = 1): Buffer {
  const loop = Buffer.concat([
    Buffer.from([0x21, 0xff, 11]),
    Buffer.from('NETSCAPE2.0', 'latin1'),
    Buffer.from([3, 1, 0, 0, 0]),
  ]);
  const control = Buffer.from([0x21, 0xf9, 4, 0, 1, 0, 0, 0]); // no transparency, 1/100 s
  const red = Buffer.concat([control, gifFrame(width, height, 0)]);
  const white = Buffer.concat([control, gifFrame(width, height, 1)]);
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    u16le(width),
    u16le(height),
    Buffer.from([0x80, 0, 0]),
    Buffer.from([255, 0, 0, 255, 255, 255]),
    loop,
    ...Array.from({ length: frames }, (_, frame) => (frame % 2 === 0 ? red : white)),
    Buffer.from([0x3b]),
  ]);
}
