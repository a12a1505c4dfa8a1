// Plain, independent readers of the containers for the stripper's tests: what segments and chunks a file has.

export interface Piece {
  type: string;
  start: number;
  end: number;
  data: Buffer;
}

/** JPEG marker segments before the first scan, by name (APP1, COM, ...), plus SOS: offset of the first scan. */
export function jpegHeader(bytes: Buffer): { segments: Array<Piece & { marker: number }>; sos: number } {
  const segments: Array<Piece & { marker: number }> = [];
  let at = 2;
  while (at + 4 <= bytes.length) {
    while (bytes[at + 1] === 0xff) at += 1; // fill bytes before a marker
    const marker = bytes[at + 1]!;
    if (marker === 0xda) return { segments, sos: at };
    const end = at + 2 + bytes.readUInt16BE(at + 2);
    const type =
      marker >= 0xe0 && marker <= 0xef
        ? `APP${marker - 0xe0}`
        : marker === 0xfe
          ? 'COM'
          : `0x${marker.toString(16)}`;
    segments.push({ marker, type, start: at, end, data: bytes.subarray(at + 4, end) });
    at = end;
  }
  throw new Error('no SOS');
}

/** The scans: from the first SOS through EOI (the last FF D9 of the file). */
export function jpegScans(bytes: Buffer): Buffer {
  const { sos } = jpegHeader(bytes);
  const eoi = bytes.lastIndexOf(Buffer.from([0xff, 0xd9]));
  return bytes.subarray(sos, eoi + 2);
}

export function pngChunks(bytes: Buffer): Piece[] {
  const chunks: Piece[] = [];
  let at = 8;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    chunks.push({ type, start: at, end: at + 12 + length, data: bytes.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
    if (type === 'IEND') break;
  }
  return chunks;
}

export function idatData(bytes: Buffer): Buffer {
  return Buffer.concat(
    pngChunks(bytes)
      .filter((chunk) => chunk.type === 'IDAT')
      .map((chunk) => chunk.data),
  );
}

export function riffChunks(bytes: Buffer): Piece[] {
  const chunks: Piece[] = [];
  let at = 12;
  const end = Math.min(bytes.length, 8 + bytes.readUInt32LE(4));
  while (at + 8 <= end) {
    const size = bytes.readUInt32LE(at + 4);
    const type = bytes.toString('latin1', at, at + 4);
    chunks.push({ type, start: at, end: at + 8 + size, data: bytes.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size % 2);
  }
  return chunks;
}
