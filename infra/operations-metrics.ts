// The figures operations watch: the business metrics by the names the code records them with, the Powertools
// variables, the alarm thresholds, and the Metrics Insights query that reads a metric's per-service totals.
import { Duration } from 'aws-cdk-lib';
import { MathExpression } from 'aws-cdk-lib/aws-cloudwatch';

/**
 * The business metrics the alarms and the dashboard read, by the exact names the code records them with
 * (lib/platform/observability/metrics.ts `recordMetric`, Powertools EMF in the namespace below). Renaming one
 * here or at its emitter silences an alarm: keep both in step.
 * - CallbacksRefused (Count): payment-callback refused a notification (bad signature, unknown order...).
 * - OutboxAgeMs (Milliseconds): outbox-drain, age of an order.paid event when it reached the bus.
 * - OutboxDelivered / OutboxDeliveryFailed (Count): outbox-drain, per event.
 * - ReconcileQueryFailed / ReconcileSettled (Count): reconciler, a channel query that failed / an order it
 *   settled (a callback that never came).
 * - OrdersPaid (Count): settlement, per order paid.
 * lib/platform/observability/metrics.ts publishes every point under `service` (POWERTOOLS_SERVICE_NAME, the function's
 * name) alone as well as under its own dimensions (reason, provider, route...). Alarms and the dashboard read
 * those totals through Metrics Insights, `SELECT SUM(name) FROM SCHEMA("<namespace>", service)`: exactly
 * the `service`-only series, summed over whichever functions emit the metric, each point counted once
 * whatever other dimensions the emitter adds.
 */
export const BUSINESS_METRICS = {
  callbacksRefused: 'CallbacksRefused',
  outboxAgeMs: 'OutboxAgeMs',
  outboxDelivered: 'OutboxDelivered',
  outboxDeliveryFailed: 'OutboxDeliveryFailed',
  reconcileQueryFailed: 'ReconcileQueryFailed',
  reconcileSettled: 'ReconcileSettled',
  ordersPaid: 'OrdersPaid',
} as const;

/** The Powertools variables every function carries (Logger, Metrics, Tracer read them). */
export const OBSERVABILITY_VARIABLES = [
  'POWERTOOLS_SERVICE_NAME',
  'POWERTOOLS_METRICS_NAMESPACE',
  'POWERTOOLS_TRACE_ENABLED',
  'POWERTOOLS_TRACER_CAPTURE_RESPONSE',
  'POWERTOOLS_TRACER_CAPTURE_ERROR',
  'POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS',
] as const;

/** The thresholds, named so docs/DEPLOYMENT.md and the tests read the same figures. */
export const ALARM_THRESHOLDS = {
  /** Percent of API requests answered 5xx in 5 minutes (a 5xx is a bug), counted from this many requests. */
  apiServerErrorPercent: 1,
  apiServerErrorMinRequests: 10,
  /** p99 latency of the API in ms, over 3 consecutive 5-minute periods. */
  apiLatencyP99Ms: 3000,
  apiLatencyPeriods: 3,
  /** 5xx answers of the payment callback URL in 5 minutes: every one is a notification the channel retries. */
  callbackServerErrors: 1,
  /** Throttled invocations of one function in 5 minutes. */
  functionThrottles: 1,
  /** A function's longest run in 5 minutes, as a share of its timeout. */
  durationOfTimeout: 0.8,
  /** Throttled DynamoDB requests in 5 minutes. */
  tableThrottles: 1,
  /** Messages waiting in the outbox dead-letter queue. */
  deadLetters: 1,
  /** Age in ms of order.paid when delivered, and of the oldest stream record the drain is reading. */
  outboxAgeMs: 5 * 60_000,
  /** Callbacks refused in 15 minutes: a few are probes or stale retries; more is an attack or a key mix-up. */
  callbacksRefused: 20,
  callbacksRefusedPeriod: Duration.minutes(15),
  /** Failed reconciler runs in 5 minutes. */
  workerErrors: 1,
} as const;

/** The period of every alarm and graph but the refused callbacks'. */
export const FIVE_MINUTES = Duration.minutes(5);

/** A Metrics Insights query over the per-service totals of one business metric (BUSINESS_METRICS). */
export function insightsQuery(
  namespace: string,
  fn: 'SUM' | 'MAX',
  metricName: string,
  period: Duration,
  label: string,
): MathExpression {
  return new MathExpression({
    expression: `SELECT ${fn}(${metricName}) FROM SCHEMA("${namespace}", service)`,
    usingMetrics: {},
    period,
    label,
  });
}
