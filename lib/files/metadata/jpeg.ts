// JPEG: drops EXIF (keeping the orientation), XMP, IPTC, comments and other APPn metadata by whole
// segments before the first scan; the scans are kept byte for byte, and whatever follows EOI is dropped.
import { EXIF_IDENTIFIER, keepsOrientation, orientationTiff, readOrientation } from './exif.ts';
import {
  APP0,
  APP1,
  APP2,
  APP13,
  APP14,
  COM,
  EOI,
  isAppMarker,
  isFrameMarker,
  type JpegSegment,
  readSegment,
  SOF55,
  SOS,
  segmentCursor,
  startsWith,
  usesByteStuffing,
} from './jpeg-markers.ts';
import { Splice } from './splice.ts';
import { countPiece, readerWork, refused, type StripResult } from './types.ts';

const XMP_ID = 'http://ns.adobe.com/xap/1.0/\0';
const XMP_EXTENSION_ID = 'http://ns.adobe.com/xmp/extension/\0';
const JFIF_HEADER_BYTES = 14; // "JFIF\0", version, units, densities, thumbnail width and height

function segment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

function sameBytes(bytes: Buffer, start: number, end: number, other: Buffer): boolean {
  return end - start === other.length && bytes.subarray(start, end).equals(other);
}

// What happens to one header segment: kept as it is, dropped (labelled), or replaced. One object shape for
// all three keeps the per-segment code monomorphic, and the shared ones allocate nothing per segment.
interface Decision {
  keep: boolean;
  label: string;
  replacement: Buffer | undefined;
}

const KEEP: Decision = { keep: true, label: '', replacement: undefined };
const DROPS = new Map<string, Decision>();
function drop(label: string): Decision {
  let decision = DROPS.get(label);
  if (decision === undefined) {
    decision = { keep: false, label, replacement: undefined };
    DROPS.set(label, decision);
  }
  return decision;
}
function replace(label: string, replacement: Buffer): Decision {
  return { keep: false, label, replacement };
}
const APP_LABELS = Array.from({ length: 16 }, (_, index) => `APP${index}`);

interface HeaderState {
  /** the first EXIF APP1 decides the orientation; later ones only go */
  exifSeen: boolean;
}

function decide(bytes: Buffer, seg: JpegSegment, state: HeaderState): Decision {
  const { marker, payload, end } = seg;
  if (marker === COM) return drop('COM comment');
  if (!isAppMarker(marker)) return KEEP;
  if (marker === APP0) {
    if (!startsWith(bytes, payload, end, 'JFIF\0')) return drop('APP0 (not JFIF)');
    // A JFIF thumbnail is a picture of the original: it can show what a crop removed.
    if (end - payload < JFIF_HEADER_BYTES) return KEEP;
    const thumbnail = bytes[payload + 12]! * bytes[payload + 13]!;
    if (thumbnail === 0 && end - payload === JFIF_HEADER_BYTES) return KEEP;
    const header = Buffer.from(bytes.subarray(payload, payload + JFIF_HEADER_BYTES));
    header[12] = 0;
    header[13] = 0;
    return replace('JFIF thumbnail', segment(APP0, header));
  }
  if (marker === APP1) {
    if (startsWith(bytes, payload, end, 'Exif\0')) {
      const first = !state.exifSeen;
      state.exifSeen = true;
      const orientation = first ? readOrientation(bytes, payload + EXIF_IDENTIFIER.length, end) : undefined;
      if (!keepsOrientation(orientation)) return drop('EXIF');
      // The APP1 that carries only the orientation: what a stripped JPEG keeps of its EXIF.
      const minimal = segment(APP1, Buffer.concat([EXIF_IDENTIFIER, orientationTiff(orientation)]));
      if (sameBytes(bytes, seg.start, end, minimal)) return KEEP;
      return replace('EXIF', minimal);
    }
    if (startsWith(bytes, payload, end, XMP_ID)) return drop('XMP');
    if (startsWith(bytes, payload, end, XMP_EXTENSION_ID)) return drop('extended XMP');
    return drop('APP1');
  }
  // The ICC profile decides the colours; Adobe's APP14 decides how YCCK/CMYK is decoded.
  if (marker === APP2 && startsWith(bytes, payload, end, 'ICC_PROFILE\0')) return KEEP;
  if (marker === APP14 && startsWith(bytes, payload, end, 'Adobe')) return KEEP;
  if (marker === APP13) return drop('APP13 Photoshop/IPTC');
  if (marker === APP2 && startsWith(bytes, payload, end, 'MPF\0')) return drop('APP2 MPF');
  return drop(APP_LABELS[marker - 0xe0]!);
}

/**
 * The first marker (not stuffing, not RSTn, not fill) at or after `from` in entropy-coded data, or -1. DCT
 * and lossless scans stuff 0xFF as FF 00; JPEG-LS scans follow 0xFF with a byte below 0x80 instead.
 */
function nextMarker(bytes: Buffer, from: number, jpegLs: boolean): number {
  const last = bytes.length - 1;
  for (let at = from; at < last; at += 1) {
    if (bytes[at] !== 0xff) continue;
    const next = bytes[at + 1]!;
    if ((jpegLs ? next < 0x80 : next === 0x00) || (next >= 0xd0 && next <= 0xd7)) at += 1;
    else if (next !== 0xff) {
      readerWork.bytes += at - from;
      return at;
    }
  }
  readerWork.bytes += Math.max(0, last - from);
  return -1;
}

const END_OF_IMAGE = Buffer.from([0xff, EOI]);

/**
 * From the first SOS: every scan and table kept byte for byte, metadata segments between scans dropped,
 * and the image ended at its EOI. A file without one (truncated, or with something that is not a segment
 * after a scan, such as a second image) ends where its last scan or segment does and gets an EOI: what
 * follows is never kept unread, which is how a position hid behind a scan that had no end marker.
 */
function walkScans(bytes: Buffer, sos: number, out: Splice, jpegLs: boolean): void {
  const length = bytes.length;
  let at = sos;
  let kept = sos; // first byte not yet handed to `out`
  // Metadata segments between scans, as [start, end) pairs and labels, applied once the end is found.
  const drops: number[] = [];
  const labels: string[] = [];
  const finish = (end: number) => {
    for (let index = 0; index < labels.length; index += 1) {
      out.keep(kept, drops[2 * index]!);
      out.note(labels[index]!);
      kept = drops[2 * index + 1]!;
    }
    out.keep(kept, end);
  };
  let pieces = 0;
  const seg = segmentCursor();
  for (;;) {
    pieces = countPiece(pieces);
    if (readSegment(bytes, at, seg) !== undefined) {
      // EOI is the one marker without a length that ends the walk.
      let marker = at;
      while (marker + 1 < length && bytes[marker + 1] === 0xff) marker += 1;
      readerWork.bytes += marker - at;
      if (at < length && bytes[at] === 0xff && bytes[marker + 1] === EOI) {
        finish(marker + 2);
        if (marker + 2 < length) out.note('data after EOI');
        return;
      }
      finish(at);
      out.insert(END_OF_IMAGE);
      if (at < length) out.note('data after the last scan');
      return;
    }
    if (seg.marker === COM || isAppMarker(seg.marker)) {
      drops.push(seg.fill, seg.end);
      labels.push(seg.marker === COM ? 'COM comment' : APP_LABELS[seg.marker - 0xe0]!);
    }
    at = seg.end;
    if (seg.marker !== SOS) continue;
    // Entropy-coded data: 0xFF appears only stuffed, as a restart marker or as fill before the next marker.
    // A plain loop: indexOf would be one native call per stuffed byte (millions, crafted).
    const marker = nextMarker(bytes, at, jpegLs);
    if (marker < 0) {
      // The scan runs to the end of the file: truncated, its data kept as far as it goes.
      finish(length);
      out.insert(END_OF_IMAGE);
      return;
    }
    at = marker;
  }
}

export function stripJpeg(bytes: Buffer): StripResult {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8)
    return refused('JPEG: no start-of-image marker');
  const out = new Splice(bytes);
  out.keep(0, 2);
  const state: HeaderState = { exifSeen: false };
  let frame: number | undefined;
  let at = 2;
  let pieces = 0;
  const seg = segmentCursor();
  for (;;) {
    pieces = countPiece(pieces);
    const problem = readSegment(bytes, at, seg);
    if (problem !== undefined) return refused(`JPEG: ${problem}`);
    if (seg.marker === SOS) {
      if (frame === undefined) return refused('JPEG: a scan before any frame header');
      // Ns components of 2 bytes each, then Ss, Se, Ah/Al.
      const components = seg.end - seg.payload >= 1 ? bytes[seg.payload]! : 0;
      if (components === 0 || seg.end - seg.payload !== 1 + 2 * components + 3)
        return refused('JPEG: malformed scan header');
      break;
    }
    if (isFrameMarker(seg.marker) || seg.marker === SOF55) {
      // Precision, height, width, Nf components of 3 bytes each; a frame without width is no image.
      const components = seg.end - seg.payload >= 6 ? bytes[seg.payload + 5]! : 0;
      const width = seg.end - seg.payload >= 6 ? bytes.readUInt16BE(seg.payload + 3) : 0;
      if (components === 0 || width === 0 || seg.end - seg.payload !== 6 + 3 * components) {
        return refused('JPEG: malformed frame header');
      }
      frame ??= seg.marker;
    }
    const decision = decide(bytes, seg, state);
    if (decision.keep) out.keep(seg.fill, seg.end);
    else {
      out.note(decision.label);
      if (decision.replacement !== undefined) out.insert(decision.replacement);
    }
    at = seg.end;
  }
  walkScans(bytes, at, out, !usesByteStuffing(frame));
  return { kind: 'stripped', bytes: out.build(), removed: out.removed };
}
