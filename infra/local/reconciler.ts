// The local stand-in for the reconciler's schedule (docs/DESIGN.md 14): in AWS an EventBridge rule invokes the
// reconciler function every 5 minutes; npm start invokes the same function (its own process, its own needs'
// environment) every `payment.reconcile.local_interval_seconds` (0: never). Each run takes the channel
// orders whose check is due (the `due` index); mock and manual orders are never on it, so with no channel
// configured a run reads the settings and an empty schedule and asks nobody.
import { log } from '#lib/platform/log.ts';

/** Calls the reconciler function with one scheduled event; resolves to its summary. */
export type ReconcilerInvoke = (event: unknown) => Promise<unknown>;

export interface LocalReconcilerOptions {
  intervalSeconds: number;
  /** The reconciler's function process; absent (handlers in this process, as in tests): nothing runs. */
  invoke?: ReconcilerInvoke;
}

export interface LocalReconciler {
  stop(): Promise<void>;
}

/** What EventBridge sends a scheduled target; the reconciler uses none of it. */
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

export function startLocalReconciler(options: LocalReconcilerOptions): LocalReconciler {
  const { invoke, intervalSeconds } = options;
  if (!invoke || intervalSeconds <= 0) return { stop: async () => {} };
  let running: Promise<void> | undefined;
  const tick = () => {
    // One run at a time, as a schedule with a long-running target would overlap otherwise.
    if (running) return;
    running = invoke(scheduledEvent(new Date()))
      .then(
        () => undefined,
        (error: unknown) => log.warn('local reconciler run failed; the next tick runs again', { error }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, intervalSeconds * 1000);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
