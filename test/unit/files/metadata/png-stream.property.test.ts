// Property: the streamed PNG stripper (confirm of presigned uploads) decides exactly as stripPng does on the
// whole file, however the bytes are cut into chunks: the same refusal reason, or the same output bytes (as
// replayed from its plan over a second read), the same labels, and the hash and size it reported.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayPlan } from '#lib/files/incoming.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { PngStreamStripper } from '#lib/files/metadata/png-stream.ts';
import { ObjectChangedError } from '#lib/files/storage.ts';
import { makePng } from '#test/support/images.ts';
import { pngChunk, pngWithMetadata } from '#test/support/metadata-images.ts';
import { mutated, noise } from './arbitraries.ts';
import { pngChunks } from './readers.ts';

const SEED = Number(process.env.METADATA_SEED ?? 20261122);
const RUNS = Number(process.env.METADATA_RUNS ?? 400);

const pngValid = pngWithMetadata({ orientation: 3 });
const pngHead = pngValid.subarray(0, 8 + 25);
const letters = fc.stringMatching(/^[A-Za-z]{4}$/);
const pngPiece = fc.oneof(
  fc.constantFrom(...pngChunks(pngValid).map((chunk) => pngValid.subarray(chunk.start, chunk.end))),
  fc
    .tuple(fc.constantFrom('tEXt', 'iTXt', 'zTXt', 'eXIf', 'IDAT', 'IEND', 'acTL', 'fdAT'), noise(24))
    .map(([type, data]) => pngChunk(type, data)),
  letters.map((type) => pngChunk(type, Buffer.alloc(0))),
  noise(16),
);
const metadataChunk = fc
  .tuple(
    fc.constantFrom('tEXt', 'iTXt', 'zTXt', 'tIME', 'eXIf', 'exIf', 'gAMA', 'iCCP'),
    fc.oneof(noise(40), fc.constant(Buffer.alloc(0))),
  )
  .map(([type, data]) => pngChunk(type, data));
const orientationChunks = fc
  .constantFrom(...pngChunks(pngWithMetadata({ orientation: 6 })).filter((chunk) => chunk.type === 'eXIf'))
  .map((chunk) => pngWithMetadata({ orientation: 6 }).subarray(chunk.start, chunk.end));
const image = pngChunks(pngValid).filter((chunk) => chunk.type === 'IDAT');
const skeleton = fc
  .tuple(
    fc.array(fc.oneof(metadataChunk, orientationChunks, pngPiece), { maxLength: 6 }),
    fc.array(metadataChunk, { maxLength: 4 }),
    fc.oneof(fc.constant(Buffer.alloc(0)), noise(20)),
  )
  .map(([before, after, trailing]) =>
    Buffer.concat([
      pngHead,
      ...before,
      ...image.map((chunk) => pngValid.subarray(chunk.start, chunk.end)),
      ...after,
      pngChunk('IEND', Buffer.alloc(0)),
      trailing,
    ]),
  );
const input = fc.oneof(
  { arbitrary: skeleton, weight: 4 },
  fc
    .array(pngPiece, { maxLength: 12 })
    .map((pieces) => Buffer.concat([makePng(1, 1).subarray(0, 8), ...pieces])),
  mutated(pngValid),
  fc.constant(pngValid),
);

/** `bytes` cut at the given points (mod its length): how a stream may hand them over. */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((point) => point % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let previous = 0;
  for (const point of [...at, bytes.length]) {
    parts.push(bytes.subarray(previous, point));
    previous = point;
  }
  return parts;
}

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

async function streamed(bytes: Buffer, parts: Buffer[]) {
  const output: Buffer[] = [];
  const stripper = new PngStreamStripper({
    keep: (b) => output.push(Buffer.from(b)),
    drop: () => {},
    insert: (b) => output.push(Buffer.from(b)),
  });
  for (const part of parts) stripper.push(part);
  const result = stripper.finish();
  if (result.kind !== 'stripped') return { result, output: undefined, replayed: undefined };
  const replayed = await collect(
    replayPlan(Readable.from(parts.filter((part) => part.length > 0)), stripper.plan, {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
    }),
  );
  return { result, output: Buffer.concat(output), replayed, whole: stripper.plan.isWhole(bytes.length) };
}

describe('PngStreamStripper against stripPng', () => {
  it('decides the same on any input, cut anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(input, fc.array(fc.nat(), { maxLength: 8 }), async (bytes, points) => {
        const whole = stripMetadata(bytes, 'png');
        const { result, output, replayed, whole: kept } = await streamed(bytes, cut(bytes, points));
        if (whole.kind === 'refused') {
          expect(result).toEqual(whole);
          return;
        }
        expect(whole.kind).toBe('stripped');
        if (whole.kind !== 'stripped' || result.kind !== 'stripped') throw new Error(result.kind);
        expect(result.removed).toEqual(whole.removed);
        expect(output!.equals(whole.bytes)).toBe(true);
        expect(replayed!.equals(whole.bytes)).toBe(true);
        // The plan says "the input itself" exactly when stripPng handed the input back.
        expect(kept).toBe(whole.bytes === bytes);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('removes the metadata of a real file and keeps its orientation in a minimal eXIf', async () => {
    const original = pngWithMetadata({ orientation: 6 });
    const { result, replayed } = await streamed(original, cut(original, [10, 40, 41, 100, 333]));
    expect(result).toEqual({ kind: 'stripped', removed: ['eXIf', 'tEXt', 'iTXt', 'zTXt', 'tIME'] });
    expect(pngChunks(replayed!).map((chunk) => chunk.type)).toEqual([
      'IHDR',
      'gAMA',
      'pHYs',
      'eXIf',
      'IDAT',
      'IEND',
    ]);
  });

  it('refuses to replay over a second read that is not the object inspected', async () => {
    const original = pngWithMetadata({ orientation: 6 });
    const stripper = new PngStreamStripper({ keep: () => {}, drop: () => {}, insert: () => {} });
    stripper.push(original);
    expect(stripper.finish().kind).toBe('stripped');
    const other = Buffer.from(original);
    const at = other.length - 20;
    other.writeUInt8(other.readUInt8(at) ^ 0xff, at);
    const input = { sha256: createHash('sha256').update(original).digest('hex'), size: original.length };
    await expect(collect(replayPlan(Readable.from([other]), stripper.plan, input))).rejects.toBeInstanceOf(
      ObjectChangedError,
    );
    // Nothing of the stored form comes out before the read is verified whole: no partial object to store.
    const seen: Buffer[] = [];
    await expect(
      (async () => {
        for await (const part of replayPlan(Readable.from([other]), stripper.plan, input))
          seen.push(part as Buffer);
      })(),
    ).rejects.toBeInstanceOf(ObjectChangedError);
    expect(Buffer.concat(seen).length).toBeLessThan(stripper.plan.outputSize);
  });
});
