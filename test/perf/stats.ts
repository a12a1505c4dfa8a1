// Percentiles, paired side-by-side sampling and plain-text tables for the benchmark report.

/** The q-quantile (0..1) of the samples, nearest rank on a sorted copy. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: readonly number[]) => quantile(samples, 0.5);

/** Milliseconds taken by one call. */
export async function timeMs(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export interface PairedResult {
  subject: number[];
  baseline: number[];
  /** p50(subject) / p50(baseline) */
  ratio: number;
}

/**
 * Times `subject` and `baseline` alternately (the order flips every iteration), so both see the same
 * machine state: drift in the stand-ins, GC, the JIT warming up. Warm-up iterations are not recorded.
 */
export async function paired<Input = undefined>(options: {
  iterations: number;
  warmup: number;
  /** Untimed work before each pair (e.g. building a request); its result goes to both runs. */
  prepare?: (iteration: number) => Input;
  subject: (input: Input) => Promise<unknown>;
  baseline: (input: Input) => Promise<unknown>;
}): Promise<PairedResult> {
  const subject: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < options.warmup + options.iterations; i++) {
    const input = options.prepare ? options.prepare(i) : (undefined as Input);
    const first = i % 2 === 0;
    const a = await timeMs(() => (first ? options.subject(input) : options.baseline(input)));
    const b = await timeMs(() => (first ? options.baseline(input) : options.subject(input)));
    if (i < options.warmup) continue;
    subject.push(first ? a : b);
    baseline.push(first ? b : a);
  }
  return { subject, baseline, ratio: median(subject) / median(baseline) };
}

/** Times `run` alone, `iterations` times after `warmup` untimed runs. */
export async function repeat(iterations: number, warmup: number, run: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    const taken = await timeMs(run);
    if (i >= warmup) samples.push(taken);
  }
  return samples;
}

export const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** A left-aligned first column, the rest right-aligned. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...cells.slice(1).map(line)].join(
    '\n',
  );
}

export const ms = (value: number) => value.toFixed(2);
