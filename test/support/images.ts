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
 * A GIF89a of colour 0 (red). The LZW stream sends a clear code before every pixel, so the code table never
 * grows and the code width stays 3 bits: valid for any decoder, trivially simple to write.
 */
export function makeGif(width: number, height: number): Buffer {
  const clear = 4;
  const end = 5;
  const codes: number[] = [];
  for (let index = 0; index < width * height; index += 1) codes.push(clear, 0);
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
    Buffer.from('GIF89a', 'latin1'),
    u16le(width),
    u16le(height),
    Buffer.from([0x80, 0, 0]), // global colour table of 2 entries, background 0, no aspect
    Buffer.from([255, 0, 0, 255, 255, 255]),
    Buffer.from([0x2c]),
    u16le(0),
    u16le(0),
    u16le(width),
    u16le(height),
    Buffer.from([0, 2]), // no local table; LZW minimum code size 2
    ...blocks,
    Buffer.from([0, 0x3b]),
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
