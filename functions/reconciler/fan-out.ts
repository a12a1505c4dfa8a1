// How a scheduled reconciler run fans out (docs/CAPACITY.md "Workers"): the schedule invokes the function
// once per range of the schedule's shards, at once; the stack (infra/workers.ts) and npm start
// (infra/local/app.ts) split the shards the same way. Free of imports, so both can read it.

/** Invocations each scheduled run fans out to (docs/CAPACITY.md "Workers"). */
export const RECONCILE_FAN_OUT = 4;

export interface ShardRange {
  from: number;
  to: number;
}

/** `count` shards split into at most `parts` contiguous ranges, as even as they go. */
export function shardRanges(count: number, parts = RECONCILE_FAN_OUT): ShardRange[] {
  const n = Math.min(parts, count);
  return Array.from({ length: n }, (_, part) => ({
    from: Math.floor((part * count) / n),
    to: Math.floor(((part + 1) * count) / n),
  }));
}
