// The local stand-in for the takedowns worker's schedule (infra/workers.ts): in AWS an EventBridge rule
// invokes it every minute; npm start invokes the same function (its own process, its own needs'
// environment) every minute too. Locally no CDN caches anything (no distribution is named), so a run sends
// its batch to the no-op invalidator and clears it, exactly as the deployed worker clears what it sent.
import { log } from '#lib/platform/log.ts';

/** Calls the takedowns function with one scheduled event; resolves to its summary. */
export type TakedownsInvoke = (event: unknown) => Promise<unknown>;

/** As the stack's schedule (TAKEDOWN_EVERY_MINUTES). */
export const LOCAL_TAKEDOWN_INTERVAL_MS = 60_000;

export interface LocalTakedownsOptions {
  /** The worker's function process; absent (handlers in this process, as in tests): nothing runs. */
  invoke?: TakedownsInvoke;
  intervalMs?: number;
}

export interface LocalTakedowns {
  stop(): Promise<void>;
}

export function startLocalTakedowns(options: LocalTakedownsOptions): LocalTakedowns {
  const { invoke, intervalMs = LOCAL_TAKEDOWN_INTERVAL_MS } = options;
  if (!invoke) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const tick = () => {
    // One run at a time: a batch is one request a minute.
    if (running) return;
    running = invoke({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: new Date().toISOString(),
    })
      .then(
        () => undefined,
        (error: unknown) => log.warn('local takedowns run failed; the next tick runs again', { error }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
