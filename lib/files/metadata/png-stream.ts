// PNG stripping over a stream (confirm of presigned uploads up to upload.presign_max_bytes): the same
// decisions as stripPng (png.ts), chunk by chunk as the bytes arrive, holding only a chunk header and at
// most one eXIf chunk's data. It reports each byte range as kept or dropped (and the bytes inserted in their
// place) to a sink, in order, so the caller hashes and measures the output without holding it, and writes it
// later by replaying the same decisions over a second read (StripPlan).
import { keepsOrientation, readOrientation } from './exif.ts';
import { orientationExifChunk, PNG_SIGNATURE } from './png.ts';
import { MAX_PIECES, readerWork } from './types.ts';

const typeCode = (type: string) => Buffer.from(type, 'latin1').readUInt32BE(0);
const IHDR = typeCode('IHDR');
const IDAT = typeCode('IDAT');
const IEND = typeCode('IEND');
const CGBI = typeCode('CgBI');
const EXIF = typeCode('eXIf');
const EXIF_CHUNKS = new Map(['eXIf', 'exIf', 'zxIf'].map((type) => [typeCode(type), type]));
const TEXT_CHUNKS = new Map(['tEXt', 'zTXt', 'iTXt', 'tIME'].map((type) => [typeCode(type), type]));
const MAX_CHUNK_LENGTH = 0x7fffffff;

/**
 * The largest eXIf chunk whose orientation is read while streaming; a larger one (no real image has one)
 * makes the stripper answer `whole`, and the caller strips the file in memory as before.
 */
export const MAX_STREAMED_EXIF_BYTES = 4 * 1024 * 1024;

/** Where the decisions go, in order of the input. */
export interface StripSink {
  keep(bytes: Buffer): void;
  drop(bytes: Buffer): void;
  insert(bytes: Buffer): void;
}

/** The output as ranges of the input and inserted bytes, replayed over a second read of the same input. */
export class StripPlan {
  /** [start, end) of the input, or an inserted Buffer, in output order. */
  readonly pieces: Array<[number, number] | Buffer> = [];
  outputSize = 0;

  keep(start: number, end: number): void {
    if (end <= start) return;
    const last = this.pieces.at(-1);
    if (Array.isArray(last) && last[1] === start) last[1] = end;
    else this.pieces.push([start, end]);
    this.outputSize += end - start;
  }

  insert(bytes: Buffer): void {
    this.pieces.push(bytes);
    this.outputSize += bytes.length;
  }

  /** True when the output is the input itself, all `inputSize` bytes of it. */
  isWhole(inputSize: number): boolean {
    if (inputSize === 0) return this.pieces.length === 0;
    const only = this.pieces[0];
    return this.pieces.length === 1 && Array.isArray(only) && only[0] === 0 && only[1] === inputSize;
  }
}

export type StreamStripResult =
  | { kind: 'stripped'; removed: string[] }
  | { kind: 'refused'; reason: string }
  /** Not decidable in bounded memory (an oversized eXIf chunk): strip the file in memory instead. */
  | { kind: 'whole' };

const tooManyPieces = (): StreamStripResult => ({
  kind: 'refused',
  reason: `PNG: more than ${MAX_PIECES} segments, chunks or boxes`,
});

const isLetter = (byte: number) => (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);

type Mode =
  | { kind: 'signature' }
  | { kind: 'header' }
  | { kind: 'pass'; remaining: number; keep: boolean }
  | { kind: 'exif'; remaining: number; label: string }
  | { kind: 'trailing' }
  | { kind: 'stopped' };

/**
 * Feed the input with `push`, then `finish()`. The sink sees every input byte once (kept or dropped) up to
 * the point where the walk stops; a refusal may come only at `finish()` (as stripPng, which checks the end
 * of the input before the chunk type, refuses a chunk running past the end before anything else about it).
 */
export class PngStreamStripper {
  readonly plan = new StripPlan();
  private mode: Mode = { kind: 'signature' };
  private pending: Buffer[] = [];
  private pendingSize = 0;
  /** Input offset of the next byte pushed. */
  private offset = 0;
  /** Input offset of the current chunk. */
  private chunkAt = 8;
  private headerSeen = false;
  private imageData = false;
  private exifSeen = false;
  private pieces = 0;
  private exif: { header: Buffer; data: Buffer[]; size: number; label: string; at: number } | undefined;
  private result: StreamStripResult | undefined;
  /** A refusal decided from a chunk header, unless the chunk turns out to run past the end. */
  private deferred: { reason: string; end: number } | undefined;
  private readonly labels: string[] = [];
  /** Input offset just past IEND, once it was seen: what follows is trailing data, dropped. */
  private iendEnd: number | undefined;

  constructor(private readonly sink: StripSink) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      const mode = this.mode;
      if (mode.kind === 'stopped') {
        this.offset += chunk.length - at;
        return;
      }
      if (mode.kind === 'signature' || mode.kind === 'header') {
        const need = (mode.kind === 'signature' ? 8 : 12) - this.pendingSize;
        const take = Math.min(need, chunk.length - at);
        this.pending.push(chunk.subarray(at, at + take));
        this.pendingSize += take;
        at += take;
        this.offset += take;
        if (this.pendingSize === (mode.kind === 'signature' ? 8 : 12)) this.decide();
        continue;
      }
      if (mode.kind === 'trailing') {
        this.dropBytes(chunk.subarray(at));
        this.offset += chunk.length - at;
        return;
      }
      const take = Math.min(mode.remaining, chunk.length - at);
      const part = chunk.subarray(at, at + take);
      at += take;
      this.offset += take;
      mode.remaining -= take;
      if (mode.kind === 'pass') {
        if (mode.keep) this.keepBytes(part);
        else this.dropBytes(part);
      } else {
        this.exif!.data.push(Buffer.from(part));
        this.exif!.size += part.length;
      }
      if (mode.remaining === 0) {
        if (mode.kind === 'exif') this.finishExif();
        else this.mode = this.iendEnd === undefined ? { kind: 'header' } : { kind: 'trailing' };
      }
    }
  }

  finish(): StreamStripResult {
    if (this.result) return this.result;
    const total = this.offset;
    if (this.deferred) {
      return this.settle({
        kind: 'refused',
        reason: total < this.deferred.end ? this.pastEnd() : this.deferred.reason,
      });
    }
    switch (this.mode.kind) {
      case 'signature':
        return this.settle({ kind: 'refused', reason: 'PNG: no PNG signature' });
      case 'header':
        if (this.pieces >= MAX_PIECES) return this.settle(tooManyPieces());
        return this.settle({
          kind: 'refused',
          reason: this.pendingSize === 0 ? 'PNG: no IEND chunk' : 'PNG: truncated chunk',
        });
      case 'pass':
      case 'exif':
        return this.settle({ kind: 'refused', reason: this.pastEnd() });
      case 'trailing':
        if (total > this.iendEnd!) this.note('data after IEND');
        return this.settle({ kind: 'stripped', removed: this.labels });
      default:
        return this.settle(this.result ?? { kind: 'refused', reason: 'PNG: truncated chunk' });
    }
  }

  private settle(result: StreamStripResult): StreamStripResult {
    this.result = result;
    return result;
  }

  private pastEnd(): string {
    return `PNG: chunk at byte ${this.chunkAt} runs past the end`;
  }

  private note(label: string): void {
    if (this.labels.at(-1) === label || this.labels.includes(label)) return;
    this.labels.push(label);
  }

  private takePending(): Buffer {
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingSize = 0;
    return bytes;
  }

  private keepBytes(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const start = this.offset - bytes.length;
    this.plan.keep(start, this.offset);
    this.sink.keep(bytes);
  }

  private dropBytes(bytes: Buffer): void {
    if (bytes.length > 0) this.sink.drop(bytes);
  }

  private stop(reason: string, end: number): void {
    this.deferred = { reason, end };
    this.mode = { kind: 'stopped' };
  }

  private decide(): void {
    const bytes = this.takePending();
    if (this.mode.kind === 'signature') {
      if (!bytes.equals(PNG_SIGNATURE)) {
        this.result = { kind: 'refused', reason: 'PNG: no PNG signature' };
        this.mode = { kind: 'stopped' };
        return;
      }
      this.keepBytes(bytes);
      this.mode = { kind: 'header' };
      return;
    }
    // A chunk header and the first 4 bytes after it (12 bytes: the least a chunk has).
    const at = this.offset - 12;
    this.chunkAt = at;
    if (this.pieces >= MAX_PIECES) {
      this.result = tooManyPieces();
      this.mode = { kind: 'stopped' };
      return;
    }
    this.pieces += 1;
    readerWork.pieces += 1;
    const length = bytes.readUInt32BE(0);
    if (length > MAX_CHUNK_LENGTH) {
      this.result = { kind: 'refused', reason: `PNG: chunk length ${length} at byte ${at}` };
      this.mode = { kind: 'stopped' };
      return;
    }
    const end = at + 12 + length;
    for (let index = 4; index < 8; index += 1) {
      if (!isLetter(bytes[index]!)) {
        this.stop(`PNG: invalid chunk type at byte ${at}`, end);
        return;
      }
    }
    const type = bytes.readUInt32BE(4);
    if (!this.headerSeen) {
      const appleFirst = type === CGBI && at === 8;
      if (!appleFirst && (type !== IHDR || length !== 13)) {
        this.stop('PNG: no IHDR chunk first', end);
        return;
      }
      this.headerSeen = !appleFirst;
    }
    // 12 bytes are in hand; the rest of the chunk follows (length + 12 in all).
    const rest = length;
    if (type === IEND) {
      if (!this.imageData) {
        this.stop('PNG: no IDAT chunk', end);
        return;
      }
      this.keepBytes(bytes);
      this.iendEnd = end;
      this.mode = rest > 0 ? { kind: 'pass', remaining: rest, keep: true } : { kind: 'trailing' };
      return;
    }
    if (type === IDAT) this.imageData = true;
    const text = TEXT_CHUNKS.get(type);
    const exif = EXIF_CHUNKS.get(type);
    if (text !== undefined) {
      this.note(text);
      this.markDropped(bytes);
      this.mode = { kind: 'pass', remaining: rest, keep: false };
      return;
    }
    if (exif !== undefined) {
      const first = !this.exifSeen;
      this.exifSeen = true;
      if (first && type === EXIF) {
        if (length > MAX_STREAMED_EXIF_BYTES) {
          this.result = { kind: 'whole' };
          this.mode = { kind: 'stopped' };
          return;
        }
        // The orientation decides; hold the chunk until it is read.
        this.exif = { header: bytes, data: [], size: 0, label: exif, at };
        if (rest === 0) this.finishExif();
        else this.mode = { kind: 'exif', remaining: rest, label: exif };
        return;
      }
      this.note(exif);
      this.markDropped(bytes);
      this.mode = { kind: 'pass', remaining: rest, keep: false };
      return;
    }
    this.keepBytes(bytes);
    this.mode = { kind: 'pass', remaining: rest, keep: true };
  }

  private markDropped(bytes: Buffer): void {
    this.dropBytes(bytes);
  }

  /** The held eXIf chunk (12 bytes of header and CRC-or-data, then the rest) is complete. */
  private finishExif(): void {
    const held = this.exif!;
    this.exif = undefined;
    const whole = Buffer.concat([held.header, ...held.data]);
    // whole = length(4) type(4) data(length) crc(4)
    const dataLength = whole.length - 12;
    const orientation = readOrientation(whole, 8, 8 + dataLength);
    if (keepsOrientation(orientation)) {
      const minimal = orientationExifChunk(orientation);
      if (whole.length === minimal.length && whole.equals(minimal)) {
        this.plan.keep(held.at, held.at + whole.length);
        this.sink.keep(whole);
        this.mode = { kind: 'header' };
        return;
      }
      this.sink.drop(whole);
      this.plan.insert(minimal);
      this.sink.insert(minimal);
      this.note(held.label);
    } else {
      this.sink.drop(whole);
      this.note(held.label);
    }
    this.mode = { kind: 'header' };
  }
}
