// The per-container cache (lib/platform/cache.ts): one load at a time, kept for its staleness, a failed
// load not kept, and the writer's own set or invalidate seen at once.
import { describe, expect, it } from 'vitest';
import { cached } from '#lib/platform/cache.ts';

function movableClock() {
  let at = 0;
  return {
    now: () => new Date(at),
    advance: (ms: number) => {
      at += ms;
    },
  };
}

describe('cached', () => {
  it('loads once for concurrent callers and serves the value for ttlMs, then revalidates with the held value', async () => {
    // Prepare
    const clock = movableClock();
    const seen: Array<number | undefined> = [];
    let loads = 0;
    const value = cached(
      async (previous: number | undefined) => {
        seen.push(previous);
        loads += 1;
        return loads;
      },
      { ttlMs: 1000, clock: clock.now },
    );

    // Act
    const first = await Promise.all([value.get(), value.get(), value.get()]);
    clock.advance(999);
    const within = await value.get();
    clock.advance(1);
    const after = await value.get();

    // Assess
    expect(first).toEqual([1, 1, 1]);
    expect(within).toBe(1);
    expect(after).toBe(2);
    expect(seen).toEqual([undefined, 1]);
  });

  it('keeps no failed load: the next caller loads again', async () => {
    let calls = 0;
    const value = cached(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('table unavailable');
        return 'loaded';
      },
      { ttlMs: 1000 },
    );
    await expect(value.get()).rejects.toThrow('table unavailable');
    expect(await value.get()).toBe('loaded');
  });

  it('serves what this container set at once, and loads again after invalidate, even over a load under way', async () => {
    // Prepare: a slow load begins before the write.
    let release: (value: string) => void = () => {};
    let loads = 0;
    const value = cached(
      () => {
        loads += 1;
        return loads === 1
          ? new Promise<string>((resolve) => (release = resolve))
          : Promise.resolve('reloaded');
      },
      { ttlMs: 60_000 },
    );
    const slow = value.get();

    // Act
    value.set('written here');
    release('read before the write');
    const slowAnswer = await slow;
    const afterSet = await value.get();
    value.invalidate();
    const afterInvalidate = await value.get();

    // Assess: the stale load answered its own caller but did not replace what was set.
    expect(slowAnswer).toBe('read before the write');
    expect(afterSet).toBe('written here');
    expect(afterInvalidate).toBe('reloaded');
  });
});
