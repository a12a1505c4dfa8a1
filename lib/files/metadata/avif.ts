// AVIF: blanks the payload of metadata items (Exif, every `mime` item, XMP among them, and `uri ` items)
// in place, same sizes, so no offset moves and no box is rebuilt, and the payload of top-level `uuid` boxes
// (where XMP also travels); the image items and every box stay byte for byte. An item is blanked wherever
// iloc puts it, whatever data reference it names: a reference to "another file" whose offsets land in this
// one still points at bytes stored here. A metadata item this cannot blank (built from other items, of
// unstated length, outside mdat and idat) is refused, never stored as it is. Orientation in AVIF is the
// irot/imir properties, not EXIF, so nothing of it is lost.
import { type Box, eachBox, readBox, readCString, readUint } from './isobmff.ts';
import { code, countPiece, MalformedImage, readerWork, refused, type StripResult } from './types.ts';

type MetadataKind = 'Exif' | 'XMP' | 'mime' | 'URI';

interface Extent {
  start: number;
  end: number;
}

// An Exif item is a 4-byte offset to the TIFF header, then the TIFF block: here offset 0 and a TIFF with an
// empty IFD0, so readers find valid, empty EXIF.
const EMPTY_EXIF = Buffer.from([0, 0, 0, 0, 0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0]);
const XMP_OPEN = Buffer.from(
  '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"/>',
  'latin1',
);
const XMP_CLOSE = Buffer.from('<?xpacket end="w"?>', 'latin1');

/** What a blanked item of `size` bytes holds. */
function blankPayload(kind: MetadataKind, size: number): Buffer {
  if (kind === 'Exif') {
    const out = Buffer.alloc(size); // zeros when too small to hold even an empty TIFF
    if (size >= EMPTY_EXIF.length) EMPTY_EXIF.copy(out);
    return out;
  }
  if (kind !== 'XMP') return Buffer.alloc(size);
  // XMP packets may be padded with whitespace before their closing processing instruction.
  if (size < XMP_OPEN.length + XMP_CLOSE.length) return Buffer.alloc(size, 0x20);
  const out = Buffer.alloc(size, 0x20);
  XMP_OPEN.copy(out, 0);
  XMP_CLOSE.copy(out, size - XMP_CLOSE.length);
  return out;
}

const FTYP = code('ftyp');
const MINI = code('mini');
const META = code('meta');
const MDAT = code('mdat');
const IINF = code('iinf');
const ILOC = code('iloc');
const IDAT = code('idat');
const INFE = code('infe');
const EXIF_ITEM = code('Exif');
const MIME_ITEM = code('mime');
const URI_ITEM = code('uri ');
const UUID = code('uuid');

/** The one box of each wanted type among the children of bytes[start, end); a second one is malformed. */
function children(bytes: Buffer, start: number, end: number, wanted: number[]): Map<number, Box> {
  const found = new Map<number, Box>();
  eachBox(bytes, start, end, (box) => {
    if (!wanted.includes(box.type)) return;
    if (found.has(box.type)) throw new MalformedImage('a box that must be single appears twice');
    found.set(box.type, box);
  });
  return found;
}

/** What a `mime` item of this content type is: XMP (blanked to an empty packet) or other metadata. */
function mimeKind(contentType: string): MetadataKind {
  return contentType.trim().toLowerCase().startsWith('application/rdf+xml') ? 'XMP' : 'mime';
}

/**
 * Item ids of metadata items, from iinf: Exif, `mime` (XMP is application/rdf+xml) and `uri ` items of
 * version 2 and 3 entries, and items of version 0 and 1 entries (which have no item type, only a content
 * type) that name any content type.
 */
function metadataItems(bytes: Buffer, iinf: Box): Map<number, MetadataKind> {
  const items = new Map<number, MetadataKind>();
  const version = readUint(bytes, iinf.payload, 1, iinf.end);
  const countSize = version === 0 ? 2 : 4;
  eachBox(bytes, iinf.payload + 4 + countSize, iinf.end, (infe) => {
    if (infe.type !== INFE) return;
    const infeVersion = readUint(bytes, infe.payload, 1, infe.end);
    if (infeVersion < 2) {
      // item_ID, item_protection_index, item_name, content_type: an item with a content type is MIME data.
      const name = readCString(bytes, infe.payload + 8, infe.end);
      const contentType = readCString(bytes, name.next, infe.end).text;
      if (contentType.length > 0)
        items.set(readUint(bytes, infe.payload + 4, 2, infe.end), mimeKind(contentType));
      return;
    }
    const idSize = infeVersion === 2 ? 2 : 4;
    const id = readUint(bytes, infe.payload + 4, idSize, infe.end);
    const typeAt = infe.payload + 4 + idSize + 2; // after item_protection_index
    const itemType = readUint(bytes, typeAt, 4, infe.end);
    if (itemType === EXIF_ITEM) items.set(id, 'Exif');
    else if (itemType === MIME_ITEM) {
      const name = readCString(bytes, typeAt + 4, infe.end);
      items.set(id, mimeKind(readCString(bytes, name.next, infe.end).text));
    } else if (itemType === URI_ITEM) items.set(id, 'URI');
  });
  return items;
}

type Located = { extents: Extent[] } | { unsupported: string };

interface Locations {
  /** where each wanted item's bytes are, or why they cannot be rewritten */
  wanted: Map<number, Located>;
  /** the extents of every other item that lives in this file, which blanking must not touch */
  others: Extent[];
}

/** Where items' bytes are, from iloc (construction methods 0, file offsets, and 1, idat offsets). */
function locate(bytes: Buffer, iloc: Box, idat: Box | undefined, wanted: ReadonlySet<number>): Locations {
  const found: Locations = { wanted: new Map(), others: [] };
  const limit = iloc.end;
  const version = readUint(bytes, iloc.payload, 1, limit);
  if (version > 2) throw new MalformedImage(`iloc version ${version}`);
  let at = iloc.payload + 4;
  const sizes = readUint(bytes, at, 1, limit);
  const more = readUint(bytes, at + 1, 1, limit);
  const offsetSize = sizes >> 4;
  const lengthSize = sizes & 15;
  const baseOffsetSize = more >> 4;
  const indexSize = version >= 1 ? more & 15 : 0;
  at += 2;
  const idSize = version < 2 ? 2 : 4;
  const count = readUint(bytes, at, idSize, limit);
  at += idSize;
  let pieces = 0;
  for (let item = 0; item < count; item += 1) {
    pieces = countPiece(pieces);
    const id = readUint(bytes, at, idSize, limit);
    at += idSize;
    let method = 0;
    if (version >= 1) {
      method = readUint(bytes, at, 2, limit) & 15;
      at += 2;
    }
    const dataReference = readUint(bytes, at, 2, limit);
    const baseOffset = readUint(bytes, at + 2, baseOffsetSize, limit);
    at += 2 + baseOffsetSize;
    const extentCount = readUint(bytes, at, 2, limit);
    at += 2;
    const isWanted = wanted.has(id);
    const extents: Extent[] = [];
    let unsupported: string | undefined;
    // An item said to be in another file is not this file's to check, unless it is metadata: its offsets
    // are then read as this file's, and blanked if they land here (else the file is refused).
    const elsewhere = dataReference !== 0 && !isWanted;
    if (method === 2) unsupported = 'AVIF: a metadata item built from other items';
    else if (method > 2) throw new MalformedImage(`iloc construction method ${method}`);
    // Extents whose fields are all 0 bytes wide read as offset 0, length 0 without moving: walking 65,535
    // of them per item (6 bytes each) took seconds on a file of kilobytes. They need no walk; any other
    // extent moves on by at least a byte, so the walk is bounded by the box.
    if (indexSize + offsetSize + lengthSize === 0) {
      if (extentCount > 0) unsupported ??= 'AVIF: an extent of unstated length';
    } else {
      for (let extent = 0; extent < extentCount; extent += 1) {
        readerWork.pieces += 1;
        at += indexSize;
        const offset = readUint(bytes, at, offsetSize, limit);
        const length = readUint(bytes, at + offsetSize, lengthSize, limit);
        at += offsetSize + lengthSize;
        if (unsupported !== undefined || elsewhere) continue;
        if (length === 0) {
          unsupported = 'AVIF: an extent of unstated length';
          continue;
        }
        let start = baseOffset + offset;
        if (method === 1) {
          if (idat === undefined) throw new MalformedImage('item in idat without an idat box');
          start += idat.payload;
          if (start + length > idat.end) throw new MalformedImage('item past the idat box');
        }
        if (start + length > bytes.length) throw new MalformedImage('item past the end of the file');
        (isWanted ? extents : found.others).push({ start, end: start + length });
      }
    }
    if (isWanted) found.wanted.set(id, unsupported === undefined ? { extents } : { unsupported });
  }
  return found;
}

/**
 * Whether a metadata extent overlaps any other extent (image data, or other metadata): blanking it would
 * then change more than metadata. Sorted sweep, so crafted item lists stay n log n.
 */
function overlaps(metadata: Extent[], others: Extent[]): boolean {
  const all = [
    ...metadata.map((extent) => ({ ...extent, metadata: true })),
    ...others.map((extent) => ({ ...extent, metadata: false })),
  ].sort((a, b) => a.start - b.start);
  let metadataEnd = 0;
  let otherEnd = 0;
  for (const extent of all) {
    if (extent.start < metadataEnd || (extent.metadata && extent.start < otherEnd)) return true;
    if (extent.metadata) metadataEnd = Math.max(metadataEnd, extent.end);
    else otherEnd = Math.max(otherEnd, extent.end);
  }
  return false;
}

/** Whether every extent lies inside the payload of one of `boxes` (disjoint: mdat boxes, meta's idat). */
function inside(extents: Extent[], boxes: Box[]): boolean {
  const sorted = [...boxes].sort((a, b) => a.payload - b.payload);
  return extents.every((extent) => {
    // The last box starting at or before the extent is the only one that can hold it.
    let low = 0;
    let high = sorted.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (sorted[middle]!.payload <= extent.start) low = middle;
      else high = middle - 1;
    }
    const box = sorted[low];
    return box !== undefined && extent.start >= box.payload && extent.end <= box.end;
  });
}

interface TopLevel {
  meta: Box | undefined;
  mdats: Box[];
  /** top-level `uuid` boxes: vendor extensions, XMP among them; nothing a decoder needs */
  uuids: Box[];
}

/** The top-level meta box (at most one) and the mdat boxes; every top-level box is checked, none kept. */
function topLevel(bytes: Buffer): TopLevel | StripResult {
  const found: TopLevel = { meta: undefined, mdats: [], uuids: [] };
  let at = 0;
  let pieces = 0;
  while (at < bytes.length) {
    pieces = countPiece(pieces);
    const box = readBox(bytes, at, bytes.length);
    if (at === 0 && box.type !== FTYP) return refused('AVIF: no ftyp box first');
    // Its Exif and XMP sit behind a bit-packed header this stripper does not read: refused, not kept.
    if (box.type === MINI) return refused('AVIF: the low-overhead (mini) container is not supported');
    if (box.type === MDAT) found.mdats.push(box);
    if (box.type === UUID) found.uuids.push(box);
    if (box.type === META) {
      if (found.meta !== undefined) throw new MalformedImage('more than one meta box');
      found.meta = box;
    }
    at = box.end;
  }
  if (at === 0) return refused('AVIF: no ftyp box first');
  return found;
}

export function stripAvif(bytes: Buffer): StripResult {
  const top = topLevel(bytes);
  if ('kind' in top) return top;
  const items = metadataExtents(bytes, top);
  if ('kind' in items) return items;
  let out: Buffer | undefined;
  const removed = new Set<string>();
  const blank = (start: number, piece: Buffer, label: string) => {
    if ((out ?? bytes).subarray(start, start + piece.length).equals(piece)) return;
    out ??= Buffer.from(bytes);
    piece.copy(out, start);
    removed.add(label);
  };
  for (const { kind, extents } of items) {
    const total = extents.reduce((sum, extent) => sum + extent.end - extent.start, 0);
    const payload = blankPayload(kind, total);
    let consumed = 0;
    for (const { start, end } of extents) {
      blank(start, payload.subarray(consumed, consumed + end - start), `${kind} item`);
      consumed += end - start;
    }
  }
  for (const uuid of top.uuids) blank(uuid.payload, Buffer.alloc(uuid.end - uuid.payload), 'uuid box');
  return { kind: 'stripped', bytes: out ?? bytes, removed: [...removed] };
}

/** Each metadata item and where its bytes are, or why the file is refused. */
function metadataExtents(
  bytes: Buffer,
  top: TopLevel,
): Array<{ kind: MetadataKind; extents: Extent[] }> | StripResult {
  const { meta } = top;
  if (meta === undefined) return [];
  const boxes = children(bytes, meta.payload + 4, meta.end, [IINF, ILOC, IDAT]);
  const iinf = boxes.get(IINF);
  const items = iinf === undefined ? new Map<number, MetadataKind>() : metadataItems(bytes, iinf);
  if (items.size === 0) return [];
  const iloc = boxes.get(ILOC);
  if (iloc === undefined) return refused('AVIF: items without an iloc box');
  const idat = boxes.get(IDAT);
  const located = locate(bytes, iloc, idat, new Set(items.keys()));
  const all: Extent[] = [];
  const found: Array<{ kind: MetadataKind; extents: Extent[] }> = [];
  for (const [id, kind] of items) {
    const location = located.wanted.get(id);
    if (location === undefined) continue; // no data: nothing to blank
    if ('unsupported' in location) return refused(location.unsupported);
    all.push(...location.extents);
    found.push({ kind, extents: location.extents });
  }
  // Blanking rewrites bytes in place: only item data, never a box header or another item's bytes.
  if (!inside(all, idat === undefined ? top.mdats : [...top.mdats, idat])) {
    return refused('AVIF: a metadata item outside mdat and idat');
  }
  if (overlaps(all, located.others)) return refused('AVIF: a metadata item overlaps other data');
  return found;
}
