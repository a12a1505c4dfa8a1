// `npx tsx test/perf/hostile-inputs.ts`: CPU time of what an upload does with crafted 4 MiB inputs (sniff,
// measure, strip; test/support/hostile-images.ts), beside a valid 4 MiB PNG and hashing the same bytes.
// The suite bounds the same work by counting it (test/unit/files/bounded-work.test.ts); these are the
// times, for a person to read, and nothing here asserts one. Best of BENCH_ROUNDS (5) rounds, CPU time.
import { createHash } from 'node:crypto';
import { measureImage } from '#lib/files/measure.ts';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { IMAGE_KINDS } from '#lib/files/metadata/types.ts';
import { sniffImage } from '#lib/files/sniff.ts';
import { hostileShapes, realisticImages, validPng } from '#test/support/hostile-images.ts';
import { table } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** CPU microseconds per call: the best of ROUNDS rounds of `calls` calls, after a warm-up. */
async function cpuMicros(calls: number, work: () => unknown): Promise<number> {
  for (let call = 0; call < 10; call += 1) await work();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.cpuUsage();
    for (let call = 0; call < calls; call += 1) await work();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / calls);
  }
  return best;
}

/** What the upload path does with any bytes before storing them: sniff, measure, hash. */
async function intake(bytes: Buffer): Promise<void> {
  await sniffImage(bytes, IMAGE_KINDS).catch(() => undefined);
  measureImage(bytes);
  createHash('sha256').update(bytes).digest('hex');
}

const png = validPng();
const hashing = await cpuMicros(5, () => createHash('sha256').update(png).digest());
const pngIntake = await cpuMicros(5, () => intake(png));
const pngMeasure = await cpuMicros(2000, () => measureImage(png));
const rows: Array<Array<string | number>> = [];
for (const [name, kind, bytes] of [...hostileShapes(), ...realisticImages()]) {
  const taken = await cpuMicros(5, () => intake(bytes));
  const measured = await cpuMicros(2000, () => measureImage(bytes));
  const stripped = await cpuMicros(3, () => stripMetadata(bytes, kind));
  rows.push([
    name,
    taken.toFixed(0),
    (taken / pngIntake).toFixed(2),
    measured.toFixed(2),
    stripped.toFixed(0),
    (stripped / hashing).toFixed(2),
  ]);
}
console.log(
  `valid 4 MiB PNG: intake ${pngIntake.toFixed(0)} µs, measure ${pngMeasure.toFixed(2)} µs; SHA-256 of it ${hashing.toFixed(0)} µs (CPU, best of ${ROUNDS})`,
);
console.log(table(['shape', 'intake µs', 'x PNG intake', 'measure µs', 'strip µs', 'x hashing'], rows));
