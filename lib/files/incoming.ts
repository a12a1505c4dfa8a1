// Reading a presigned upload back for its confirmation without holding it (docs/PERFORMANCE.md "Memory"):
// one pass over the object's stream sizes it, hashes it, sniffs and measures its head, and (PNG) decides
// what stripping removes, holding a head of MEASURE_HEAD_BYTES and at most one chunk header. What is stored
// is then either a server-side copy of the version read (nothing removed) or the same decisions replayed
// over a second read of that version, streamed into one PutObject. JPEG, WebP and AVIF with stripping on
// are still stripped in memory (one buffer of the object's size), as their strippers need random access.
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { errors } from '#lib/core/errors.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { PngStreamStripper, type StripPlan } from '#lib/files/metadata/png-stream.ts';
import { log } from '#lib/platform/log.ts';
import { MEASURE_HEAD_BYTES, measureImage } from './dimensions.ts';
import { fileTooLarge, UploadError } from './errors.ts';
import { checkAndSniff, type UploadFacts } from './record.ts';
import type { ImageKind, SniffedType } from './sniff.ts';
import { ObjectChangedError, type StoredObject } from './storage.ts';
import { storedUpload } from './stored-bytes.ts';

/** Bytes gathered before the type is sniffed (file-type reads at most a few KiB of them). */
const SNIFF_HEAD_BYTES = 64 * 1024;

/** Kinds whose stripper rewrites the container (metadata/index.ts); the others are stored as they are. */
const REWRITTEN_KINDS: ReadonlySet<ImageKind> = new Set(['jpeg', 'png', 'webp', 'avif']);

export interface IncomingLimits {
  allowedTypes: readonly string[];
  /** upload.presign_max_bytes */
  limit: number;
  stripMetadata: boolean;
  /** Strip a PNG in memory too (after the streamed walk could not decide in bounded memory). */
  inMemory?: boolean;
}

export interface ExpectedUpload {
  /** The size and type the presign declared. */
  size: number;
  mimeType: string;
  /** The record key, for log lines. */
  key: string;
}

/** What confirm stores: its facts, and how to produce exactly those bytes again. */
export interface InspectedUpload {
  facts: UploadFacts;
  /** True when the stored bytes differ from the object: a server-side copy would not do. */
  rewritten: boolean;
  /** SHA-256 (hex) and size of the object as read: a second read must find exactly these. */
  input: { sha256: string; size: number };
  /** The stored bytes, when they were built in memory (JPEG, WebP, AVIF stripped). */
  bytes?: Buffer;
  /** The stored bytes as ranges of the object read (PNG stripped while streaming). */
  plan?: StripPlan;
}

export function checkSize(actual: number, declared: number, limit: number): void {
  if (actual > limit) throw fileTooLarge(limit);
  if (actual === 0) throw new UploadError('bad_request', 'file: is empty');
  if (actual !== declared) {
    throw new UploadError('bad_request', `file: is ${actual} bytes but ${declared} were declared`);
  }
}

/** Collects the first `limit` bytes of what it is given. */
class Head {
  private readonly parts: Buffer[] = [];
  size = 0;
  constructor(private readonly limit: number) {}
  add(bytes: Buffer): void {
    if (this.size >= this.limit || bytes.length === 0) return;
    const part = bytes.subarray(0, this.limit - this.size);
    // A copy: a subarray would keep the whole chunk it came from alive.
    this.parts.push(Buffer.from(part));
    this.size += part.length;
  }
  bytes(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }
}

/**
 * Reads the object once (the caller opened it) and answers what confirm stores. Errors, in the order a
 * whole read checked them: 413 over the limit, 400 empty or not the declared size, 415 type (unknown,
 * not allowed, not the declared one) or a container the stripper refuses.
 */
export async function inspectStream(
  object: StoredObject,
  expected: ExpectedUpload,
  limits: IncomingLimits,
  reopen: () => Promise<StoredObject | undefined>,
): Promise<InspectedUpload> {
  const { limit } = limits;
  if (object.contentLength !== undefined) {
    try {
      checkSize(object.contentLength, expected.size, limit);
    } catch (error) {
      object.body.destroy?.();
      throw error;
    }
  }
  const inputHash = createHash('sha256');
  let outputHash: Hash | undefined;
  const outputHead = new Head(MEASURE_HEAD_BYTES);
  let outputSize = 0;
  const sink = {
    keep(bytes: Buffer) {
      inputHash.update(bytes);
      outputHash?.update(bytes);
      outputHead.add(bytes);
      outputSize += bytes.length;
    },
    drop(bytes: Buffer) {
      outputHash ??= inputHash.copy();
      inputHash.update(bytes);
    },
    insert(bytes: Buffer) {
      outputHash ??= inputHash.copy();
      outputHash.update(bytes);
      outputHead.add(bytes);
      outputSize += bytes.length;
    },
  };

  let sniffed: SniffedType | undefined;
  let sniffError: unknown;
  let consume: ((bytes: Buffer) => void) | undefined;
  let stripper: PngStreamStripper | undefined;
  let whole: { buffer: Buffer; size: number } | undefined;
  const early: Buffer[] = [];
  let earlySize = 0;

  const choose = async () => {
    const head = Buffer.concat(early, earlySize);
    try {
      sniffed = await checkAndSniff(head, {
        allowed: limits.allowedTypes,
        // Sizes are checked on the whole object; here only the type.
        maxBytes: Number.MAX_SAFE_INTEGER,
        expectedMimeType: expected.mimeType,
      });
    } catch (error) {
      // With the size already checked from the object's length, the type's answer is final: stop reading.
      if (object.contentLength !== undefined) throw error;
      sniffError = error;
      consume = () => {};
      return;
    }
    if (limits.stripMetadata && sniffed.kind === 'png' && !limits.inMemory) {
      stripper = new PngStreamStripper(sink);
      consume = (bytes) => stripper!.push(bytes);
    } else if (limits.stripMetadata && REWRITTEN_KINDS.has(sniffed.kind)) {
      // In memory (random access): one buffer of the declared size, filled in place.
      whole = { buffer: Buffer.allocUnsafe(Math.min(expected.size, limit)), size: 0 };
      consume = (bytes) => {
        inputHash.update(bytes);
        if (whole!.size + bytes.length <= whole!.buffer.length) bytes.copy(whole!.buffer, whole!.size);
        whole!.size += bytes.length;
      };
    } else {
      consume = (bytes) => sink.keep(bytes);
    }
    for (const bytes of early) consume(bytes);
    early.length = 0;
  };

  let size = 0;
  const body = object.body;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw fileTooLarge(limit);
      if (consume) {
        consume(chunk);
        continue;
      }
      early.push(chunk);
      earlySize += chunk.length;
      if (earlySize >= SNIFF_HEAD_BYTES) await choose();
    }
  } finally {
    body.destroy?.();
  }
  checkSize(size, expected.size, limit);
  if (!consume) await choose();
  if (sniffError !== undefined) throw sniffError;
  const type = sniffed!;

  if (whole) {
    const sha256 = inputHash.digest('hex');
    const stored = storedUpload(whole.buffer, type, { strip: true, key: expected.key, inputSha256: sha256 });
    return {
      facts: stored.facts,
      rewritten: stored.rewritten,
      input: { sha256, size },
      ...(stored.rewritten ? { bytes: stored.bytes } : {}),
    };
  }

  if (stripper) {
    const result = stripper.finish();
    if (result.kind === 'refused') throw new UploadError('unsupported_media_type', `file: ${result.reason}`);
    if (result.kind === 'whole') {
      // An oversized eXIf chunk: strip in memory, from a second read of the object.
      const again = await reopen();
      if (!again) throw errors.conflict('file: changed during confirm; confirm again');
      return inspectStream(again, expected, { ...limits, inMemory: true }, reopen);
    }
    if (result.removed.length > 0) {
      log.debug('metadata removed from an upload', { key: expected.key, removed: result.removed });
    }
  } else if (limits.stripMetadata) {
    const reason = stripMetadata(Buffer.alloc(0), type.kind);
    if (reason.kind === 'unchanged') {
      log.info('upload stored with its metadata', { key: expected.key, reason: reason.reason });
    }
  }

  const rewritten = stripper !== undefined && !stripper.plan.isWhole(size);
  const sha256 = inputHash.digest('hex');
  const { width, height } = measureImage(outputHead.bytes());
  return {
    facts: {
      sha256: outputHash ? outputHash.digest('hex') : sha256,
      size: outputSize,
      mimeType: type.mimeType,
      ext: type.ext,
      kind: type.kind,
      width,
      height,
    },
    rewritten,
    input: { sha256, size },
    ...(rewritten ? { plan: stripper!.plan } : {}),
  };
}

/**
 * The stored bytes of a streamed strip, from a second read of the object: the plan's ranges and inserts in
 * order. When that read is not the object inspected (another size or hash) the stream fails with
 * ObjectChangedError before its last bytes, so an upload sending it never completes.
 */
export function replayPlan(source: Readable, plan: StripPlan, input: InspectedUpload['input']): Readable {
  async function* replay(): AsyncGenerator<Buffer> {
    const hash = createHash('sha256');
    let offset = 0;
    let piece = 0;
    const pieces = plan.pieces;
    // The last output piece is held back until the whole read is verified.
    let held: Buffer | undefined;
    const out = function* (bytes: Buffer): Generator<Buffer> {
      if (held) yield held;
      held = bytes;
    };
    for await (const chunk of source as AsyncIterable<Buffer>) {
      hash.update(chunk);
      const chunkStart = offset;
      const chunkEnd = offset + chunk.length;
      offset = chunkEnd;
      while (piece < pieces.length) {
        const current = pieces[piece]!;
        if (!Array.isArray(current)) {
          yield* out(current);
          piece += 1;
          continue;
        }
        const [start, end] = current;
        if (start >= chunkEnd) break;
        const from = Math.max(start, chunkStart);
        const to = Math.min(end, chunkEnd);
        if (to > from) yield* out(chunk.subarray(from - chunkStart, to - chunkStart));
        if (end <= chunkEnd) piece += 1;
        else break;
      }
    }
    for (; piece < pieces.length; piece += 1) {
      const current = pieces[piece]!;
      if (Array.isArray(current)) throw new ObjectChangedError(false);
      yield* out(current);
    }
    if (offset !== input.size || hash.digest('hex') !== input.sha256) throw new ObjectChangedError(false);
    if (held) yield held;
  }
  return Readable.from(replay(), { objectMode: false });
}
