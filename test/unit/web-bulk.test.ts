// The console's bulk actions (web/src/bulk.ts): every selected file is acted on once, never more than four
// requests at a time, and the outcome names each failure by its file.
import { describe, expect, it } from 'vitest';
import { BULK_CONCURRENCY, describeOutcome, runBulk } from '../../web/src/bulk.ts';

const files = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ original_name: `f${index}.png` }));
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('runBulk', () => {
  it('acts on every file once with at most four requests in flight', async () => {
    const selected = files(11);
    const seen: string[] = [];
    let inFlight = 0;
    let most = 0;

    const outcome = await runBulk(selected, async (file) => {
      inFlight++;
      most = Math.max(most, inFlight);
      seen.push(file.original_name);
      await tick();
      inFlight--;
    });

    expect(BULK_CONCURRENCY).toBe(4);
    expect(most).toBe(4);
    expect(seen.sort()).toEqual(selected.map((file) => file.original_name).sort());
    expect(outcome).toEqual({ done: 11, failures: [] });
  });

  it('goes on past failures and names each failed file with the reason', async () => {
    const selected = files(5);

    const outcome = await runBulk(selected, async (file) => {
      await tick();
      if (file.original_name === 'f1.png' || file.original_name === 'f3.png')
        throw new Error('file: not found');
    });
    const described = describeOutcome(outcome, 'deleted', (error) => (error as Error).message);

    expect(outcome.done).toBe(3);
    expect(described).toEqual({
      message: '3 deleted',
      error: 'Not done: f1.png (file: not found); f3.png (file: not found)',
    });
  });

  it('asks nothing for an empty selection', async () => {
    let calls = 0;
    const outcome = await runBulk([], async () => calls++);
    expect(calls).toBe(0);
    expect(describeOutcome(outcome, 'updated', String)).toEqual({ message: '0 updated', error: '' });
  });
});
