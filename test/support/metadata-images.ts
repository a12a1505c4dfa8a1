// Images carrying metadata (EXIF with GPS, XMP, IPTC, comments, text chunks), built in code for the
// metadata stripper's tests: every secret string contains SECRET, so "gone" is checkable on the bytes.
import { deflateSync } from 'node:zlib';
import { makeGif, makeJpeg, makePng, makeWebp, pngChunk, u16be, u32be, u32le } from './images.ts';

// Tests import the PNG chunk writer from here with the metadata builders.
export { pngChunk };

/** Present in every piece of metadata these builders write; absent from pixels and colour data. */
export const SECRET = 'SECRET';

// TIFF field types
const ASCII = 2;
const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;

interface TiffEntry {
  tag: number;
  type: number;
  count: number;
  /** the value bytes (big-endian); over 4 bytes they go to the data area */
  value: Buffer;
}

function ascii(tag: number, text: string): TiffEntry {
  const value = Buffer.from(`${text}\0`, 'latin1');
  return { tag, type: ASCII, count: value.length, value };
}

function rationals(tag: number, values: Array<[number, number]>): TiffEntry {
  return {
    tag,
    type: RATIONAL,
    count: values.length,
    value: Buffer.concat(values.flatMap(([n, d]) => [u32be(n), u32be(d)])),
  };
}

/** One IFD at `offset` (from the TIFF start) with its out-of-line values right behind it. */
function ifd(entries: TiffEntry[], offset: number, next = 0): Buffer {
  const sorted = [...entries].sort((a, b) => a.tag - b.tag);
  let dataAt = offset + 2 + sorted.length * 12 + 4;
  const table: Buffer[] = [u16be(sorted.length)];
  const data: Buffer[] = [];
  for (const entry of sorted) {
    table.push(u16be(entry.tag), u16be(entry.type), u32be(entry.count));
    if (entry.value.length <= 4)
      table.push(Buffer.concat([entry.value, Buffer.alloc(4 - entry.value.length)]));
    else {
      table.push(u32be(dataAt));
      const padded =
        entry.value.length % 2 === 1 ? Buffer.concat([entry.value, Buffer.alloc(1)]) : entry.value;
      data.push(padded);
      dataAt += padded.length;
    }
  }
  table.push(u32be(next));
  return Buffer.concat([...table, ...data]);
}

export interface ExifOptions {
  orientation?: number;
  gps?: boolean;
}

/**
 * A big-endian TIFF block as cameras write it: IFD0 (Make, Model, Orientation, pointers), an Exif IFD
 * (DateTimeOriginal, a user comment) and a GPS IFD (latitude 48.8584 N, longitude 2.2945 E).
 */
export function exifTiff({ orientation, gps = true }: ExifOptions = {}): Buffer {
  const exifEntries = [ascii(0x9003, '2024:05:06 07:08:09'), ascii(0xa431, `${SECRET}-serial`)];
  const gpsEntries: TiffEntry[] = [
    { tag: 0x0000, type: 1, count: 4, value: Buffer.from([2, 3, 0, 0]) },
    ascii(0x0001, 'N'),
    rationals(0x0002, [
      [48, 1],
      [51, 1],
      [3024, 100],
    ]),
    ascii(0x0003, 'E'),
    rationals(0x0004, [
      [2, 1],
      [17, 1],
      [4020, 100],
    ]),
  ];
  const ifd0Entries: TiffEntry[] = [
    ascii(0x010e, `${SECRET} description`),
    ascii(0x010f, `${SECRET}Cam`),
    ascii(0x0110, 'Model 1'),
  ];
  if (orientation !== undefined) {
    ifd0Entries.push({ tag: 0x0112, type: SHORT, count: 1, value: u16be(orientation) });
  }
  // Sizes are known before offsets: place IFD0, then the Exif IFD, then the GPS IFD.
  const pointerCount = gps ? 2 : 1;
  const ifd0Size = ifd(
    [...ifd0Entries, ...Array.from({ length: pointerCount }, () => pointer(0, 0))],
    8,
  ).length;
  const exifAt = 8 + ifd0Size;
  const exifIfd = ifd(exifEntries, exifAt);
  const gpsAt = exifAt + exifIfd.length;
  const pointers = [pointer(0x8769, exifAt)];
  if (gps) pointers.push(pointer(0x8825, gpsAt));
  const parts = [Buffer.from('MM\0\x2a', 'latin1'), u32be(8), ifd([...ifd0Entries, ...pointers], 8), exifIfd];
  if (gps) parts.push(ifd(gpsEntries, gpsAt));
  return Buffer.concat(parts);
}

function pointer(tag: number, offset: number): TiffEntry {
  return { tag, type: LONG, count: 1, value: u32be(offset) };
}

export const XMP_PACKET = `<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:exif="http://ns.adobe.com/exif/1.0/"
 xmp:CreatorTool="${SECRET} Tool" exif:GPSLatitude="48,51.504N" exif:GPSLongitude="2,17.67E"/>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`;

/** Photoshop's image resource block holding an IPTC-IIM record (caption and city). */
export function photoshopIptc(): Buffer {
  const dataset = (tag: number, text: string) => {
    const value = Buffer.from(text, 'latin1');
    return Buffer.concat([Buffer.from([0x1c, 2, tag]), u16be(value.length), value]);
  };
  const iptc = Buffer.concat([dataset(0x78, `${SECRET} caption`), dataset(0x5a, `${SECRET}ville`)]);
  const padded = iptc.length % 2 === 1 ? Buffer.concat([iptc, Buffer.alloc(1)]) : iptc;
  return Buffer.concat([
    Buffer.from('Photoshop 3.0\0', 'latin1'),
    Buffer.from('8BIM', 'latin1'),
    u16be(0x0404),
    Buffer.from([0, 0]), // empty Pascal name, padded
    u32be(iptc.length),
    padded,
  ]);
}

export function jpegSegment(marker: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, marker]), u16be(payload.length + 2), payload]);
}

/** A fake ICC profile segment: its bytes must survive stripping untouched. */
export const ICC_SEGMENT = jpegSegment(
  0xe2,
  Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 1]), Buffer.alloc(128, 0x11)]),
);

export interface JpegMetadataOptions extends ExifOptions {
  width?: number;
  height?: number;
  exif?: boolean;
  xmp?: boolean;
  extendedXmp?: boolean;
  iptc?: boolean;
  comment?: boolean;
  icc?: boolean;
  /** bytes after EOI, as multi-picture JPEGs carry a second image */
  trailing?: Buffer;
}

/** makeJpeg's decodable JPEG with metadata segments inserted after its JFIF APP0. */
export function jpegWithMetadata(options: JpegMetadataOptions = {}): Buffer {
  const { width = 5, height = 3, exif = true, xmp = true, iptc = true, comment = true, icc = true } = options;
  const base = makeJpeg(width, height);
  const afterApp0 = 2 + 2 + base.readUInt16BE(4);
  const inserted: Buffer[] = [];
  if (exif)
    inserted.push(jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), exifTiff(options)])));
  if (xmp)
    inserted.push(jpegSegment(0xe1, Buffer.from(`http://ns.adobe.com/xap/1.0/\0${XMP_PACKET}`, 'utf8')));
  if (options.extendedXmp) {
    const guid = 'A'.repeat(32);
    const body = Buffer.from(`<x:xmpmeta xmlns:x="adobe:ns:meta/">${SECRET} depth</x:xmpmeta>`, 'utf8');
    inserted.push(
      jpegSegment(
        0xe1,
        Buffer.concat([
          Buffer.from(`http://ns.adobe.com/xmp/extension/\0${guid}`),
          u32be(body.length),
          u32be(0),
          body,
        ]),
      ),
    );
  }
  if (icc) inserted.push(ICC_SEGMENT);
  if (iptc) inserted.push(jpegSegment(0xed, photoshopIptc()));
  if (comment) inserted.push(jpegSegment(0xfe, Buffer.from(`${SECRET} comment`, 'latin1')));
  return Buffer.concat([
    base.subarray(0, afterApp0),
    ...inserted,
    base.subarray(afterApp0),
    options.trailing ?? Buffer.alloc(0),
  ]);
}

export interface PngMetadataOptions extends ExifOptions {
  width?: number;
  height?: number;
}

/** makePng's PNG with colour chunks kept by the stripper and every metadata chunk type it removes. */
export function pngWithMetadata(options: PngMetadataOptions = {}): Buffer {
  const { width = 4, height = 3 } = options;
  const base = makePng(width, height, [10, 200, 30]);
  const afterIhdr = 8 + 25;
  const xmp = Buffer.concat([
    Buffer.from('XML:com.adobe.xmp\0\0\0\0\0', 'latin1'),
    Buffer.from(XMP_PACKET, 'utf8'),
  ]);
  const inserted = [
    pngChunk('gAMA', u32be(45455)),
    pngChunk('pHYs', Buffer.concat([u32be(2835), u32be(2835), Buffer.from([1])])),
    pngChunk('eXIf', exifTiff(options)),
    pngChunk('tEXt', Buffer.from(`Comment\0${SECRET} text`, 'latin1')),
    pngChunk('iTXt', xmp),
    pngChunk('zTXt', Buffer.concat([Buffer.from('Author\0\0', 'latin1'), deflateSync(`${SECRET} author`)])),
    pngChunk('tIME', Buffer.from([0x07, 0xe8, 5, 6, 7, 8, 9])),
  ];
  const beforeEnd = base.length - 12;
  const late = pngChunk('tEXt', Buffer.from(`Late\0${SECRET} after data`, 'latin1'));
  return Buffer.concat([
    base.subarray(0, afterIhdr),
    ...inserted,
    base.subarray(afterIhdr, beforeEnd),
    late,
    base.subarray(beforeEnd),
  ]);
}

export function riffChunk(fourcc: string, data: Buffer): Buffer {
  const pad = data.length % 2 === 1 ? Buffer.alloc(1) : Buffer.alloc(0);
  return Buffer.concat([Buffer.from(fourcc, 'latin1'), u32le(data.length), data, pad]);
}

export function riff(chunks: Buffer[]): Buffer {
  const body = Buffer.concat(chunks);
  return Buffer.concat([
    Buffer.from('RIFF', 'latin1'),
    u32le(4 + body.length),
    Buffer.from('WEBP', 'latin1'),
    body,
  ]);
}

export interface WebpMetadataOptions extends ExifOptions {
  width?: number;
  height?: number;
  /** write "Exif\0\0" before the TIFF block, as some tools do */
  exifPrefix?: boolean;
  icc?: Buffer;
}

/** An extended WebP (VP8X) around makeWebp's lossless image, with EXIF and XMP chunks and their flags. */
export function webpWithMetadata(options: WebpMetadataOptions = {}): Buffer {
  const { width = 3, height = 2 } = options;
  const simple = makeWebp(width, height);
  const vp8l = simple.subarray(12);
  const flags = 0x10 | 0x08 | 0x04 | (options.icc ? 0x20 : 0); // alpha, EXIF, XMP
  const canvas = Buffer.alloc(6);
  canvas.writeUIntLE(width - 1, 0, 3);
  canvas.writeUIntLE(height - 1, 3, 3);
  const exif = Buffer.concat([
    options.exifPrefix ? Buffer.from('Exif\0\0', 'latin1') : Buffer.alloc(0),
    exifTiff(options),
  ]);
  return riff([
    riffChunk('VP8X', Buffer.concat([Buffer.from([flags, 0, 0, 0]), canvas])),
    ...(options.icc ? [riffChunk('ICCP', options.icc)] : []),
    vp8l,
    riffChunk('EXIF', exif),
    riffChunk('XMP ', Buffer.from(XMP_PACKET, 'utf8')),
  ]);
}

function box(type: string, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([u32be(body.length + 8), Buffer.from(type, 'latin1'), body]);
}

function fullBox(type: string, version: number, ...content: Buffer[]): Buffer {
  return box(type, Buffer.from([version, 0, 0, 0]), ...content);
}

function infe(id: number, itemType: string, contentType?: string): Buffer {
  const extra = contentType === undefined ? [] : [Buffer.from(`${contentType}\0`, 'latin1')];
  return fullBox('infe', 2, u16be(id), u16be(0), Buffer.from(itemType, 'latin1'), Buffer.from([0]), ...extra);
}

/** Stand-in for the AV1 payload: the stripper must leave it byte for byte. */
export const AVIF_PIXELS = Buffer.from('AV1 coded pixels stand-in '.repeat(4), 'latin1');

/**
 * An AVIF container (headers real, AV1 payload a stand-in) whose primary item has an Exif item (TIFF with
 * GPS, behind "Exif\0\0") and an XMP item, all three located by iloc in mdat.
 */
export function avifWithMetadata(options: ExifOptions & { width?: number; height?: number } = {}): Buffer {
  const { width = 6, height = 4 } = options;
  const exif = Buffer.concat([u32be(6), Buffer.from('Exif\0\0', 'latin1'), exifTiff(options)]);
  const xmp = Buffer.from(XMP_PACKET, 'utf8');
  const payloads = [AVIF_PIXELS, exif, xmp];
  const ftyp = box('ftyp', Buffer.from('avif', 'latin1'), u32be(0), Buffer.from('avifmif1miaf', 'latin1'));
  const meta = (dataStart: number) => {
    let at = dataStart;
    const locations = payloads.map((payload, index) => {
      const entry = Buffer.concat([u16be(index + 1), u16be(0), u16be(1), u32be(at), u32be(payload.length)]);
      at += payload.length;
      return entry;
    });
    return fullBox(
      'meta',
      0,
      fullBox('hdlr', 0, u32be(0), Buffer.from('pict', 'latin1'), Buffer.alloc(12), Buffer.from([0])),
      fullBox('pitm', 0, u16be(1)),
      fullBox('iinf', 0, u16be(3), infe(1, 'av01'), infe(2, 'Exif'), infe(3, 'mime', 'application/rdf+xml')),
      fullBox('iloc', 0, Buffer.from([0x44, 0x00]), u16be(3), ...locations),
      box(
        'iprp',
        box('ipco', fullBox('ispe', 0, u32be(width), u32be(height))),
        fullBox('ipma', 0, u32be(1), u16be(1), Buffer.from([1, 0x81])),
      ),
    );
  };
  const dataStart = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(dataStart), box('mdat', ...payloads)]);
}

/** Where an AVIF item's single extent is, from a v0 iloc with 4-byte offsets and lengths (as built above). */
export function avifItemBytes(bytes: Buffer, itemId: number): Buffer {
  const iloc = bytes.indexOf('iloc', 0, 'latin1');
  const count = bytes.readUInt16BE(iloc + 4 + 4 + 2);
  for (let index = 0; index < count; index += 1) {
    const at = iloc + 4 + 4 + 2 + 2 + index * 14;
    if (bytes.readUInt16BE(at) === itemId) {
      const offset = bytes.readUInt32BE(at + 6);
      return bytes.subarray(offset, offset + bytes.readUInt32BE(at + 10));
    }
  }
  throw new Error(`no item ${itemId}`);
}

// Hostile files (issue 29, finding 5): each hides a position where an earlier stripper left it.

/** A GIF sub-block chain of `data` (255-byte blocks and a 0 terminator). */
function gifSubBlocks(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < data.length; at += 255) {
    const piece = data.subarray(at, at + 255);
    parts.push(Buffer.from([piece.length]), piece);
  }
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/**
 * makeGif's GIF with an XMP application extension (GPS in the packet, written raw as XMP's GIF embedding
 * does, with its 258-byte "magic trailer"), a comment and a private application extension, then a Netscape
 * loop extension the stripper keeps, and a second XMP packet after the trailer.
 */
export function gifWithMetadata(width = 4, height = 3): Buffer {
  const base = makeGif(width, height);
  const afterTable = 13 + 6; // signature, screen descriptor, 2-entry global colour table
  const magic = Buffer.concat([
    Buffer.from([1]),
    Buffer.from(Array.from({ length: 256 }, (_, index) => 255 - index)),
    Buffer.from([0]),
  ]);
  const xmp = Buffer.concat([
    Buffer.from([0x21, 0xff, 11]),
    Buffer.from('XMP DataXMP', 'latin1'),
    Buffer.from(XMP_PACKET, 'utf8'),
    magic,
  ]);
  const comment = Buffer.concat([
    Buffer.from([0x21, 0xfe]),
    gifSubBlocks(Buffer.from(`${SECRET} GPS 48.8584 N 2.2945 E`, 'latin1')),
  ]);
  const privateApp = Buffer.concat([
    Buffer.from([0x21, 0xff, 11]),
    Buffer.from('SECRETAPP10', 'latin1'),
    gifSubBlocks(Buffer.from(`${SECRET} lat=48.8584`, 'latin1')),
  ]);
  const loop = Buffer.from([0x21, 0xff, 11, ...Buffer.from('NETSCAPE2.0', 'latin1'), 3, 1, 0, 0, 0]);
  return Buffer.concat([
    base.subarray(0, afterTable),
    loop,
    xmp,
    comment,
    privateApp,
    base.subarray(afterTable),
    Buffer.from(XMP_PACKET, 'utf8'),
  ]);
}

/**
 * makePng's PNG with a C2PA manifest chunk (caBX: a JUMBF box holding an assertion with a position) and an
 * unknown private ancillary chunk holding an XMP packet with GPS.
 */
export function pngWithC2pa(width = 4, height = 3): Buffer {
  const base = makePng(width, height, [10, 200, 30]);
  const afterIhdr = 8 + 25;
  const assertion = Buffer.from(
    JSON.stringify({ label: 'stds.exif', data: { 'exif:GPSLatitude': '48,51.504N', note: SECRET } }),
    'utf8',
  );
  const box = (type: string, ...content: Buffer[]) => {
    const body = Buffer.concat(content);
    return Buffer.concat([u32be(8 + body.length), Buffer.from(type, 'latin1'), body]);
  };
  // A JUMBF superbox: its description (the C2PA type UUID, toggles "label present", the label) and a JSON
  // content box holding an EXIF assertion.
  const c2paUuid = Buffer.from('6332706100110010800000aa00389b71', 'hex');
  const jumbf = box(
    'jumb',
    box('jumd', c2paUuid, Buffer.from([3]), Buffer.from('c2pa\0', 'latin1')),
    box('json', assertion),
  );
  return Buffer.concat([
    base.subarray(0, afterIhdr),
    pngChunk('caBX', jumbf),
    pngChunk('gpSx', Buffer.from(XMP_PACKET, 'utf8')),
    base.subarray(afterIhdr),
  ]);
}

/** An ICO whose one image is pngWithMetadata's PNG (EXIF with GPS, text, XMP). */
export function icoWithPngMetadata(width = 4, height = 3): Buffer {
  const png = pngWithMetadata({ width, height });
  const entry = Buffer.concat([
    Buffer.from([width, height, 0, 0]),
    Buffer.from([1, 0, 32, 0]), // planes, bits per pixel (little-endian)
    u32le(png.length),
    u32le(6 + 16),
  ]);
  return Buffer.concat([Buffer.from([0, 0, 1, 0, 1, 0]), entry, png]);
}

/** The PNG of an ICO's first entry. */
export function icoFirstImage(ico: Buffer): Buffer {
  return ico.subarray(ico.readUInt32LE(18), ico.readUInt32LE(18) + ico.readUInt32LE(14));
}

/**
 * makeJpeg's JPEG (no metadata) without its EOI, followed by an EXIF APP1 with GPS after the scan
 * (`after: 'segment'`) or a whole second JPEG with GPS (`after: 'image'`).
 */
export function jpegWithoutEoi(after: 'segment' | 'image', width = 5, height = 3): Buffer {
  const base = makeJpeg(width, height);
  const exif = jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), exifTiff({ gps: true })]));
  return Buffer.concat([base.subarray(0, -2), after === 'segment' ? exif : jpegWithMetadata()]);
}

/**
 * `avif` with the data_reference_index of every item but `keepItem` set to `reference` (1: the items
 * claim to live in "another file" while their offsets point into this one). Walks a version 0-2 iloc.
 */
export function withDataReference(avif: Buffer, keepItem = 1, reference = 1): Buffer {
  const out = Buffer.from(avif);
  const iloc = out.indexOf('iloc', 0, 'latin1') + 4;
  const version = out[iloc]!;
  let at = iloc + 4;
  const offsetSize = out[at]! >> 4;
  const lengthSize = out[at]! & 15;
  const baseSize = out[at + 1]! >> 4;
  const indexSize = version >= 1 ? out[at + 1]! & 15 : 0;
  at += 2;
  const idSize = version < 2 ? 2 : 4;
  const count = out.readUIntBE(at, idSize);
  at += idSize;
  for (let item = 0; item < count; item += 1) {
    const id = out.readUIntBE(at, idSize);
    at += idSize + (version >= 1 ? 2 : 0);
    if (id !== keepItem) out.writeUInt16BE(reference, at);
    at += 2 + baseSize;
    const extents = out.readUInt16BE(at);
    at += 2 + extents * (indexSize + offsetSize + lengthSize);
  }
  return out;
}
