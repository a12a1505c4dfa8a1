// The scope of one Lambda invocation (docs/OBSERVABILITY.md): log lines carry its ids and cold-start flag,
// metrics recorded inside it are written once at its end, and with tracing on it is an X-Ray subsegment.
// HTTP groups enter it from lib/http/handler.ts; the worker functions wrap their handler in
// `observeInvocation`.
import type { Context } from 'aws-lambda';
import { log, withLogContext } from '#lib/platform/log.ts';
import { collectMetrics, recordMetric } from './metrics.ts';
import { loadTracer, traced, tracingEnabled } from './tracing.ts';

/** Functions (group or worker names) that have served an invocation in this process. */
const warm = new Set<string>();

export interface InvocationInfo {
  /** The function group or worker name (`accounts`, `outbox-drain`...). */
  name: string;
  /** Lambda's context; tests may pass a partial one or none. */
  context?: Partial<Context>;
  /** The id a caller can quote (HTTP: API Gateway's request id, see lib/http/observability.ts). */
  requestId?: string;
}

/** Whether `name` has not served an invocation in this process (a Lambda container serves one function). */
function takeColdStart(name: string): boolean {
  if (warm.has(name)) return false;
  warm.add(name);
  return true;
}

/** Runs `work` as one invocation of `info.name`. */
export async function withInvocation<T>(info: InvocationInfo, work: () => Promise<T>): Promise<T> {
  if (tracingEnabled()) await loadTracer();
  const coldStart = takeColdStart(info.name);
  const functionRequestId = info.context?.awsRequestId;
  return withLogContext(
    {
      function: info.name,
      coldStart,
      ...(info.requestId ? { requestId: info.requestId } : {}),
      ...(functionRequestId ? { functionRequestId } : {}),
    },
    () =>
      collectMetrics(() => {
        if (coldStart) recordMetric('ColdStart', { dimensions: { function_name: info.name } });
        return traced(info.name, coldStart, work);
      }),
  );
}

/**
 * A worker's Lambda handler (no HTTP): the invocation scope around it, and a logged line when it throws
 * (Lambda counts the failure in its own Errors metric).
 */
export function observeInvocation<Event, Result>(
  name: string,
  handler: (event: Event, context: Context) => Promise<Result>,
): (event: Event, context: Context) => Promise<Result> {
  return (event, context) =>
    withInvocation({ name, context }, async () => {
      try {
        return await handler(event, context);
      } catch (error) {
        log.error('invocation failed', { error });
        throw error;
      }
    });
}
