// Bounds for the workers that fan out (docs/CAPACITY.md "Workers"): how many tasks are in flight at once (so
// one payment channel is never flooded), and how many start each second (so mail stays under SES's rate).

/** Runs tasks with at most `max` in flight; the others wait their turn, first come first served. */
export function concurrencyLimit(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` never drops below what is in flight.
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}

/**
 * Spaces starts evenly at `perSecond`: each call resolves at its own slot, 1/perSecond after the previous
 * one (never sooner; a slot not taken in time is not saved up, so there is no burst after a pause).
 */
export function startPacer(perSecond: number, now: () => number = Date.now): () => Promise<void> {
  const gapMs = 1000 / perSecond;
  let nextSlot = 0;
  return async () => {
    const at = Math.max(now(), nextSlot);
    nextSlot = at + gapMs;
    const wait = at - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}
