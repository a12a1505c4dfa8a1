// The local stand-in for the workers' schedules (infra/workers.ts): in AWS an EventBridge rule invokes the
// reconciler every 5 minutes, the takedowns worker and the account-lifecycle worker every minute, the reminders and the bandwidth worker every
// 5 minutes; npm start invokes the same functions (each its own process, its own needs' environment) on a timer, with the event
// EventBridge sends a scheduled target. Each run fans out inside itself as in AWS (every shard of its listing
// read at once). Locally no CDN caches anything, so a takedowns run lists its files on the deny-list's table
// record (which the local server reads as its edge) and sends its batch to the no-op invalidator; a
// reconciler run with no channel configured asks nobody.
import { log } from '#lib/platform/log.ts';

/** Calls a worker's function with one scheduled event; resolves to its summary. */
export type ScheduledInvoke = (event: unknown) => Promise<unknown>;

/** As the stack's takedowns schedule (TAKEDOWN_EVERY_MINUTES). */
export const LOCAL_TAKEDOWN_INTERVAL_MS = 60_000;

/** As the stack's account-lifecycle schedule (LIFECYCLE_EVERY_MINUTES): exports and due deletions. */
export const LOCAL_LIFECYCLE_INTERVAL_MS = 60_000;

/** As the stack's webhook retry schedule (every minute). */
export const LOCAL_WEBHOOK_RETRY_INTERVAL_MS = 60_000;

export interface LocalSchedule {
  stop(): Promise<void>;
}

/** What EventBridge sends a scheduled target; the workers use none of it. */
function scheduledEvent(now: Date) {
  return {
    version: '0',
    id: `local-${now.getTime()}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    time: now.toISOString(),
    resources: [],
    detail: {},
  };
}

/**
 * Runs `invoke` every `intervalMs`, one run at a time (a run still going at the next tick skips it, as a
 * schedule whose target runs long would otherwise overlap). Without `invoke` (handlers in this process, as
 * in tests) or with an interval of 0, nothing runs.
 */
export function startLocalSchedule(
  worker: string,
  intervalMs: number,
  invoke?: ScheduledInvoke,
): LocalSchedule {
  if (!invoke || intervalMs <= 0) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = invoke(scheduledEvent(new Date()))
      .then(
        () => undefined,
        (error: unknown) =>
          log.warn('local scheduled run failed; the next tick runs again', { worker, error }),
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
