// Payment reconciliation (docs/DESIGN.md 14, docs/PAYMENTS-GUIDE.md "Reconciliation"): a pending channel order
// whose callback never came is asked about at its channel, and settled when the channel's verified answer
// reports it paid, through the same checks a callback passes (lib/billing/callbacks.ts) and the same single
// settlement write (paid_via reconciliation). A channel that cannot be asked changes nothing: a warning, a
// metric, and the next run asks again.

import type { ChannelAdapter, QueryVerdict } from '#lib/billing/channels/types.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { settleReportedPayment } from './callbacks.ts';
import type { StoredOrder } from './model.ts';
import type { OrderRepository } from './orders.ts';
import type { GatewaySource } from './registry.ts';
import { CHANNELS, type ChannelName } from './settings.ts';
import type { Settlement } from './settlement.ts';

/** Which pending orders are asked about: created between `maxAgeMinutes` and `minAgeMinutes` ago. */
export interface ReconcileWindow {
  /** Younger orders are left to their callback, which normally arrives within seconds. */
  minAgeMinutes: number;
  /** The order TTL plus a margin: past it the channel has closed the order (its time_expire) long ago. */
  maxAgeMinutes: number;
}

export interface ReconcileCounts {
  /** Orders asked about. */
  checked: number;
  /** Settled by this run (paid_via reconciliation). */
  settled: number;
  /** Found paid already (a callback or another run got there first): nothing written. */
  already_paid: number;
  /** The channel answered: not paid (yet). */
  still_pending: number;
  /** No usable answer, or an answer refused (another merchant, another amount): nothing written. */
  failed: number;
}

export interface ReconcileSummary extends ReconcileCounts {
  providers: Partial<Record<ChannelName, ReconcileCounts>>;
  window: { created_from: string; created_to: string };
  /** True when more orders were pending than one run asks about (or time ran short); the rest wait. */
  truncated: boolean;
}

export interface ReconcilerDeps {
  orders: OrderRepository;
  gateways: GatewaySource;
  settlement: Settlement;
  clock: Clock;
}

const MINUTE_MS = 60_000;
/** Bounds one run (each query may take the channel's 5 s timeout): the rest wait for the next run. */
export const MAX_ORDERS_PER_RUN = 200;
/** Queries in flight at once, across channels. */
const CONCURRENCY = 4;
/** No new query starts with less time than this left (a query's 5 s timeout plus its settlement). */
const TIME_RESERVE_MS = 15_000;

export interface RunOptions {
  /** The invocation's time left (Lambda's context.getRemainingTimeInMillis); absent: no limit. */
  timeLeftMs?: () => number;
}

type Outcome = 'settled' | 'already_paid' | 'still_pending' | 'failed';

const emptyCounts = (): ReconcileCounts => ({
  checked: 0,
  settled: 0,
  already_paid: 0,
  still_pending: 0,
  failed: 0,
});

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * One run over the window. Never throws for one channel or one order; only when the settings or the
   * order listing cannot be read at all (the run then fails as a whole and the schedule runs it again).
   */
  async run(window: ReconcileWindow, options: RunOptions = {}): Promise<ReconcileSummary> {
    const now = this.deps.clock();
    const from = new Date(now.getTime() - window.maxAgeMinutes * MINUTE_MS);
    const to = new Date(now.getTime() - window.minAgeMinutes * MINUTE_MS);
    const summary: ReconcileSummary = {
      ...emptyCounts(),
      providers: {},
      window: { created_from: from.toISOString(), created_to: to.toISOString() },
      truncated: false,
    };
    if (from >= to) return summary;
    const { registry } = await this.deps.gateways.current();
    // Only channels registered now can be asked (mock and manual never are: no channel to ask).
    const adapters = new Map<ChannelName, ChannelAdapter>();
    for (const name of CHANNELS) {
      const adapter = registry.channel(name);
      if (adapter) adapters.set(name, adapter);
    }
    if (adapters.size === 0) return summary;

    const due: StoredOrder[] = [];
    for await (const order of this.deps.orders.pendingCreatedBetween(from, to, [...adapters.keys()])) {
      if (due.length === MAX_ORDERS_PER_RUN) {
        summary.truncated = true;
        break;
      }
      due.push(order);
    }
    if (summary.truncated) {
      log.warn('payment reconciliation has more pending orders than one run asks about', {
        asked: MAX_ORDERS_PER_RUN,
      });
    }

    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        if (options.timeLeftMs && options.timeLeftMs() < TIME_RESERVE_MS) {
          summary.truncated = true;
          return;
        }
        const order = due[next++]!;
        const provider = order.provider as ChannelName;
        const outcome = await this.reconcileOrder(order, provider, adapters.get(provider)!);
        const counts = summary.providers[provider] ?? emptyCounts();
        summary.providers[provider] = counts;
        for (const total of [summary, counts]) {
          total.checked += 1;
          total[outcome] += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
    if (due.length > 0) log.info('payment reconciliation run', { ...summary });
    return summary;
  }

  private async reconcileOrder(order: StoredOrder, provider: ChannelName, adapter: ChannelAdapter) {
    recordMetric('ReconcileChecked', { dimensions: { provider } });
    let verdict: QueryVerdict;
    try {
      verdict = await adapter.queryOrder(order.id);
    } catch {
      // Adapters answer failures as `unknown`; an escape is treated the same, without its message.
      verdict = { kind: 'unknown', reason: 'malformed', detail: 'query threw' };
    }
    if (verdict.kind === 'unknown') return this.failed(order, provider, verdict.reason, verdict.detail);
    if (verdict.kind === 'not_paid') return 'still_pending';
    if (verdict.outTradeNo !== order.id) return this.failed(order, provider, 'order_mismatch');
    try {
      const outcome = await settleReportedPayment(this.deps, provider, verdict, 'reconciliation');
      if (outcome.kind === 'refused') return this.failed(order, provider, outcome.code, outcome.reason);
      if (outcome.kind === 'already_paid') return 'already_paid';
      recordMetric('ReconcileSettled', { dimensions: { provider } });
      log.info('order settled by reconciliation', { order_id: order.id, provider });
      return 'settled';
    } catch (error) {
      // The settlement write failed (throttling, a conflict that outlasted its retries): next run retries.
      log.error('payment reconciliation could not settle a paid order', {
        order_id: order.id,
        provider,
        error,
      });
      recordMetric('ReconcileQueryFailed', { dimensions: { provider, reason: 'settlement_error' } });
      return 'failed';
    }
  }

  private failed(order: StoredOrder, provider: ChannelName, reason: string, detail?: string): Outcome {
    // Only our order id, the provider and a short reason: never a key, a signature or the answer itself.
    log.warn('payment reconciliation query failed', {
      order_id: order.id,
      provider,
      reason,
      ...(detail ? { detail } : {}),
    });
    recordMetric('ReconcileQueryFailed', { dimensions: { provider, reason } });
    return 'failed';
  }
}

/** The window for these settings: `payment.reconcile` and the order TTL (docs/PAYMENTS-GUIDE.md). */
export function reconcileWindow(payment: {
  order_ttl_minutes: number;
  reconcile: { min_age_minutes: number; margin_minutes: number };
}): ReconcileWindow {
  return {
    minAgeMinutes: payment.reconcile.min_age_minutes,
    maxAgeMinutes: payment.order_ttl_minutes + payment.reconcile.margin_minutes,
  };
}
