// The workers' bounds (lib/platform/throughput.ts): never more tasks in flight than the limit, every task
// run, a failing one releasing its slot; starts spaced evenly at the rate, no burst after a pause.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { concurrencyLimit, startPacer } from '#lib/platform/throughput.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('concurrencyLimit', () => {
  it('keeps at most max tasks in flight and runs every one, a failing task releasing its slot', async () => {
    // Prepare
    const limit = concurrencyLimit(3);
    let inFlight = 0;
    let most = 0;
    const task = (n: number) => async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1 + (n % 3)));
      inFlight -= 1;
      if (n % 7 === 0) throw new Error(`task ${n}`);
      return n;
    };

    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, n) => limit(task(n))));

    // Assess
    expect(most).toBe(3);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(6);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(34);
    expect(inFlight).toBe(0);
  });
});

describe('startPacer', () => {
  it('spaces starts 1/rate apart, and saves no slot up while idle', async () => {
    // Prepare
    vi.useFakeTimers();
    const pace = startPacer(10);
    const started: number[] = [];
    const start = () => pace().then(() => started.push(Date.now()));
    const t0 = Date.now();

    // Act: five at once, then a pause of a second, then three more at once.
    const first = Array.from({ length: 5 }, start);
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(first);
    const second = Array.from({ length: 3 }, start);
    await vi.advanceTimersByTimeAsync(1000);
    await Promise.all(second);

    // Assess
    expect(started.map((at) => at - t0)).toEqual([0, 100, 200, 300, 400, 1000, 1100, 1200]);
  });
});
