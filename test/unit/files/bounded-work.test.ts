// Work per upload is bounded (docs/UPLOADS.md): on inputs shaped to make a naive reader loop per byte, per
// segment, per box or per entry, sniffing and measuring (image-size, over a bounded head) do a bounded
// amount of work whatever the size, and stripping does work linear in it. Counted, not timed (readerWork in
// lib/files/metadata/types.ts, the bytes file-type reads, image-size's reads), so a loaded machine cannot
// fail it; the times are test/perf/hostile-inputs.ts's.
import { describe, expect, it } from 'vitest';
import { HEIF_HEAD_BYTES, MEASURE_HEAD_BYTES, measuredHead, measureImage } from '#lib/files/measure.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { IMAGE_KINDS, MAX_PIECES, readerWork } from '#lib/files/metadata/types.ts';
import { sniffImage } from '#lib/files/sniff.ts';
import {
  HOSTILE_SIZE,
  type HostileShape,
  hostileShapes,
  realisticImages,
  validPng,
} from '#test/support/hostile-images.ts';

const SHAPES = hostileShapes();
/** Two walks at the cap of 65,536 pieces: what the worst shape may cost (a literal, so a higher cap fails). */
const PIECES_BOUND = 2 * 65_536;
const SMALL_SHAPES = hostileShapes(HOSTILE_SIZE / 4);

/** What the readers count while `run` runs: pieces visited plus bytes examined one at a time. */
function work(run: () => unknown): { pieces: number; bytes: number; total: number } {
  readerWork.pieces = 0;
  readerWork.bytes = 0;
  run();
  return { pieces: readerWork.pieces, bytes: readerWork.bytes, total: readerWork.pieces + readerWork.bytes };
}

const DATA_VIEW_READS = [
  'getUint8',
  'getUint16',
  'getUint32',
  'getInt16',
  'getInt32',
  'getBigUint64',
] as const;

/** DataView reads made while `run` runs (image-size reads every field through one). */
function dataViewReads(run: () => unknown): number {
  let count = 0;
  const originals = DATA_VIEW_READS.map((name) => [name, DataView.prototype[name]] as const);
  for (const [name, original] of originals) {
    Object.defineProperty(DataView.prototype, name, {
      configurable: true,
      writable: true,
      value(this: DataView, ...args: unknown[]) {
        count += 1;
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
  try {
    run();
  } finally {
    for (const [name, original] of originals) {
      Object.defineProperty(DataView.prototype, name, {
        configurable: true,
        writable: true,
        value: original,
      });
    }
  }
  return count;
}

/** The reads file-type makes from `bytes` while sniffing them: its tokenizer copies each one out by subarray. */
async function sniffReads(bytes: Buffer): Promise<{ calls: number; bytes: number }> {
  const reads = { calls: 0, bytes: 0 };
  const counted = Buffer.from(bytes);
  Object.setPrototypeOf(
    counted,
    Object.create(Buffer.prototype, {
      subarray: {
        value(this: Buffer, start?: number, end?: number) {
          const part = Buffer.prototype.subarray.call(this, start, end);
          reads.calls += 1;
          reads.bytes += part.length;
          return part;
        },
      },
    }),
  );
  await sniffImage(counted, IMAGE_KINDS).catch(() => undefined);
  return reads;
}

const named = (shapes: HostileShape[], name: string) => shapes.find(([shape]) => shape === name)![2];

describe('bounded work on crafted 4 MiB inputs', () => {
  it('counts what the readers do (the bounds below are not vacuous)', async () => {
    // The fill bytes, the entropy-coded scan and the chunk walk are each counted as they are walked.
    expect(work(() => stripMetadata(named(SHAPES, 'JPEG: fill bytes'), 'jpeg')).bytes).toBeGreaterThan(
      HOSTILE_SIZE - 16,
    );
    expect(
      work(() => stripMetadata(named(SHAPES, 'JPEG: a scan of stuffed bytes'), 'jpeg')).bytes,
    ).toBeGreaterThan(HOSTILE_SIZE - 1024);
    expect(work(() => stripMetadata(named(SHAPES, 'PNG: empty text chunks'), 'png')).pieces).toBe(MAX_PIECES);
    expect(dataViewReads(() => measureImage(named(SHAPES, 'AVIF: ipco of ispe boxes')))).toBeGreaterThan(
      HEIF_HEAD_BYTES / 20,
    );
    expect((await sniffReads(validPng())).calls).toBeGreaterThan(0);
  });

  it('sniffs any shape reading a few kilobytes at most, whatever its size', async () => {
    for (const [name, , bytes] of SHAPES) {
      const reads = await sniffReads(bytes);
      // file-type reads headers; its longest walk here is PNG's (at most 512 chunk headers, ~4 KiB). A walk
      // per byte or per box of the 4 MiB would read megabytes in a million calls.
      expect(reads.bytes, `${name}: ${reads.bytes} bytes read`).toBeLessThanOrEqual(64 * 1024);
      expect(reads.calls, `${name}: ${reads.calls} reads`).toBeLessThanOrEqual(2048);
    }
  });

  it('measures any shape reading only its head, in a bounded number of reads, whatever its size', () => {
    for (const [name, , bytes] of [...SHAPES, ...SMALL_SHAPES]) {
      const reads = dataViewReads(() => measureImage(bytes));
      // image-size reads through DataViews: per byte of a 1 MiB head that is a million. Its property walk of
      // a HEIF is quadratic, bounded by the 64 KiB head: 16 million reads at worst (a 1 MiB head: 4 billion).
      expect(reads, `${name}: ${reads} reads`).toBeLessThanOrEqual(20 * 1024 * 1024);
    }
    expect(measuredHead(Buffer.alloc(HOSTILE_SIZE)).length).toBe(MEASURE_HEAD_BYTES);
    expect(measuredHead(named(SHAPES, 'AVIF: ipco of ispe boxes')).length).toBe(HEIF_HEAD_BYTES);
  });

  it('strips any shape in work linear in its size: each byte examined at most twice, each walk capped', () => {
    for (const [name, kind, bytes] of [...SHAPES, ...realisticImages()]) {
      const { pieces, bytes: scanned } = work(() => stripMetadata(bytes, kind));
      // A walk refuses past MAX_PIECES (65,536) pieces; fill bytes at the end of a JPEG are examined twice.
      // A quadratic walk, an unbounded loop per piece or a walk no longer capped exceeds these many times.
      expect(pieces, `${name}: ${pieces} pieces`).toBeLessThanOrEqual(PIECES_BOUND);
      expect(scanned, `${name}: ${scanned} bytes examined`).toBeLessThanOrEqual(2 * bytes.length);
    }
  });

  it('strips four times the bytes in at most four times the work (no walk grows faster than its input)', () => {
    SHAPES.forEach(([name, kind, bytes], index) => {
      const [, , small] = SMALL_SHAPES[index]!;
      const large = work(() => stripMetadata(bytes, kind)).total;
      const quarter = work(() => stripMetadata(small, kind)).total;
      // The slack covers the fixed head of each shape; a quadratic walk would take sixteen times the work.
      expect(large, `${name}: ${large} vs ${quarter} for a quarter of it`).toBeLessThanOrEqual(
        4 * quarter + 4096,
      );
    });
  });

  it('refuses an AVIF whose metadata extents are 0 bytes wide, without walking them', () => {
    const bytes = named(SHAPES, 'AVIF: iloc of zero-width extents');
    let result: ReturnType<typeof stripMetadata> | undefined;
    const { pieces } = work(() => {
      result = stripMetadata(bytes, 'avif');
    });
    expect(result).toEqual({ kind: 'refused', reason: 'AVIF: an extent of unstated length' });
    // 65,535 items of 6 bytes and a few boxes; walking their declared extents was 4 billion steps.
    expect(pieces).toBeLessThan(MAX_PIECES + 16);
  });
});
