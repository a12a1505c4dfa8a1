// Payment reconciliation (docs/DESIGN.md 14, docs/PAYMENTS-GUIDE.md "Reconciliation"): a pending channel order
// whose callback never came is asked about at its channel, and settled when the channel's verified answer
// reports it paid, through the same checks a callback passes (lib/billing/callbacks.ts) and the same single
// settlement write (paid_via reconciliation). Each such order has its own schedule (the `due` index,
// lib/billing/reconcile-schedule.ts): a run reads every shard of it at once, each shard's due orders most
// overdue first, and moves each to its next check or out of the schedule. A channel that cannot be asked changes nothing but
// the order's next check: a warning, a metric, and a later run asks again. An order is asked about only at
// the gateway it was placed with (StoredOrder.gateway_origin).

import type { ChannelAdapter, QueryVerdict } from '#lib/billing/channels/types.ts';
import { type Clock, ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { concurrencyLimit } from '#lib/platform/throughput.ts';
import { settleReportedPayment } from './callbacks.ts';
import type { CouponDesk } from './coupon-desk.ts';
import type { DueOrder, OrderRepository } from './orders.ts';
import type { ReconcileSchedule } from './reconcile-schedule.ts';
import type { RefundCompletion } from './refund-completion.ts';
import type { GatewaySource } from './registry.ts';
import { CHANNELS, type ChannelName } from './settings.ts';
import type { Settlement } from './settlement.ts';

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
  /** The run took orders whose check was due at or before this instant. */
  due_until: string;
  /** Orders that left the schedule unpaid (checks spent, or past their deadline and margin). */
  left_schedule: number;
  /** True when more orders were due than one run asks about (or time ran short); the rest wait. */
  truncated: boolean;
  /** Coupon redemptions given back by this run: orders (of any provider) that expired unpaid. */
  coupons_released: number;
  /** Refunds left pending that this run's channel answers completed (succeeded or failed). */
  refunds_completed: number;
}

export interface ReconcilerDeps {
  orders: OrderRepository;
  gateways: GatewaySource;
  settlement: Settlement;
  schedule: ReconcileSchedule;
  /** payment.reconcile.max_orders_per_run. */
  maxOrdersPerRun: number;
  /** payment.reconcile.channel_concurrency: queries in flight at once at one channel. */
  channelConcurrency: number;
  clock: Clock;
  /** Gives back the coupon redemptions of orders that expired unpaid (docs/DESIGN.md 17). */
  coupons: CouponDesk;
  /** Asks the channels about refunds left pending (docs/DESIGN.md 17). */
  refunds: Pick<RefundCompletion, 'reconcilePending'>;
}

/** No new query starts with less time than this left (a query's 5 s timeout plus its settlement). */
const TIME_RESERVE_MS = 15_000;
/** Due orders read per page of a shard. */
const PAGE = 100;
/** Pending refunds and coupon holds of expired orders taken per run, beside the checks. */
const SIDE_WORK_PER_RUN = 1000;

export interface RunOptions {
  /** The invocation's time left (Lambda's context.getRemainingTimeInMillis); absent: no limit. */
  timeLeftMs?: () => number;
  /** The shards of the schedule this run reads, `from` to `to` - 1 (the schedule fans out); absent: all. */
  shards?: { from: number; to: number };
}

type Outcome = 'settled' | 'already_paid' | 'still_pending' | 'failed';

const emptyCounts = (): ReconcileCounts => ({
  checked: 0,
  settled: 0,
  already_paid: 0,
  still_pending: 0,
  failed: 0,
});

/** What one run shares between its shards: the channels to ask, their limits, its totals. */
interface RunState {
  adapters: Map<ChannelName, ChannelAdapter>;
  limits: Map<ChannelName, ReturnType<typeof concurrencyLimit>>;
  summary: ReconcileSummary;
  timeShort: () => boolean;
}

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * One run over the orders due now: every shard of the schedule (or of the range given) read at once, each
   * by its own page loop, at most `channelConcurrency` queries in flight at each channel (docs/CAPACITY.md
   * "Workers"). Never
   * throws for one channel or one order; only when the settings or the schedule cannot be read at all (the
   * run then fails as a whole and the schedule runs it again).
   */
  async run(options: RunOptions = {}): Promise<ReconcileSummary> {
    const now = this.deps.clock();
    const summary: ReconcileSummary = {
      ...emptyCounts(),
      providers: {},
      due_until: now.toISOString(),
      left_schedule: 0,
      truncated: false,
      coupons_released: 0,
      refunds_completed: 0,
    };
    // Beside the checks, never fatal: refunds left pending, and coupon redemptions held by orders (of any
    // provider) past their deadline, given back; by one invocation of a fanned-out run (the first range's).
    const sideLimit =
      (options.shards?.from ?? 0) === 0 ? Math.min(this.deps.maxOrdersPerRun, SIDE_WORK_PER_RUN) : 0;
    const sideWork = Promise.all([
      (sideLimit > 0 ? this.deps.refunds.reconcilePending(sideLimit) : Promise.resolve(0)).catch(
        (error: unknown) => {
          log.error('pending refunds could not be read', { error });
          return 0;
        },
      ),
      (sideLimit > 0
        ? this.deps.coupons.releaseExpired((id) => this.deps.orders.get(id), sideLimit)
        : Promise.resolve(0)
      ).catch((error: unknown) => {
        log.error('coupon redemptions of expired orders could not be read', { error });
        return 0;
      }),
    ]);
    const { registry } = await this.deps.gateways.current();
    // Only channels registered now can be asked (mock and manual orders are never scheduled: no channel).
    const state: RunState = {
      adapters: new Map(),
      limits: new Map(),
      summary,
      timeShort: () => options.timeLeftMs !== undefined && options.timeLeftMs() < TIME_RESERVE_MS,
    };
    for (const name of CHANNELS) {
      const adapter = registry.channel(name);
      if (adapter) state.adapters.set(name, adapter);
      state.limits.set(name, concurrencyLimit(this.deps.channelConcurrency));
    }
    let budget = this.deps.maxOrdersPerRun;
    const readShard = async (shard: number) => {
      for await (const page of this.deps.orders.dueInShard(shard, now, PAGE)) {
        if (budget <= 0 || state.timeShort()) {
          summary.truncated = true;
          return;
        }
        // A page past the budget leaves orders due as surely as a page never read.
        if (page.length > budget) summary.truncated = true;
        const taken = page.slice(0, budget);
        budget -= taken.length;
        await Promise.all(taken.map((order) => this.handle(order, state)));
      }
    };
    const { from, to } = options.shards ?? { from: 0, to: this.deps.orders.dueShards };
    await Promise.all(Array.from({ length: to - from }, (_, n) => readShard(from + n)));
    [summary.refunds_completed, summary.coupons_released] = await sideWork;
    if (summary.truncated) {
      log.warn('payment reconciliation has more orders due than one run asks about', {
        asked: summary.checked,
      });
    }
    if (summary.checked + summary.left_schedule > 0) log.info('payment reconciliation run', { ...summary });
    return summary;
  }

  /** One due order: asked about at its channel (within the channel's limit), then moved on or out. */
  private async handle(order: DueOrder, state: RunState): Promise<void> {
    const { summary } = state;
    const provider = order.provider as ChannelName;
    const adapter = state.adapters.get(provider);
    if (!adapter) {
      // Its channel is off now: nobody to ask. It keeps its place (no check counted) until its end.
      if (await this.moveOn(order, false)) summary.left_schedule += 1;
      return;
    }
    const outcome = await state.limits.get(provider)!(async () =>
      state.timeShort() ? undefined : this.reconcileOrder(order, provider, adapter),
    );
    if (!outcome) {
      // Too little time left to ask: it stays due, and the next run takes it.
      summary.truncated = true;
      return;
    }
    const counts = summary.providers[provider] ?? emptyCounts();
    summary.providers[provider] = counts;
    for (const total of [summary, counts]) {
      total.checked += 1;
      total[outcome] += 1;
    }
    // A settled order left the schedule in its settlement; an already paid one did too, or is taken out.
    if (outcome === 'settled') return;
    if (outcome === 'already_paid') await this.leave(order, order.reconcile_checks + 1);
    else if (await this.moveOn(order, true)) summary.left_schedule += 1;
  }

  /**
   * The order is still unpaid after this run: to its next check (one more counted when it was asked), or out
   * of the schedule. True when it left. A write that finds the order moved (settled, or taken by another
   * run) changes nothing; a failed write leaves it due, so the next run takes it again.
   */
  private async moveOn(order: DueOrder, asked: boolean): Promise<boolean> {
    const now = this.deps.clock();
    const checks = order.reconcile_checks + (asked ? 1 : 0);
    const nextCheck = this.deps.schedule.nextCheck(now, checks, order.deadline_ms);
    if (!nextCheck) {
      const left = await this.leave(order, checks);
      if (left) {
        recordMetric('ReconcileGaveUp', { dimensions: { provider: order.provider } });
        log.info('order left payment reconciliation unpaid', {
          order_id: order.id,
          provider: order.provider,
          checks,
        });
      }
      return left;
    }
    await this.deps.orders.reschedule(order, nextCheck, asked).catch((error: unknown) => {
      if (error instanceof ConditionFailedError) return;
      log.error('payment reconciliation could not schedule an order’s next check', {
        order_id: order.id,
        error,
      });
    });
    return false;
  }

  private async leave(order: DueOrder, checks: number): Promise<boolean> {
    try {
      await this.deps.orders.leaveSchedule(order, checks);
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) {
        log.error('payment reconciliation could not take an order off its schedule', {
          order_id: order.id,
          error,
        });
      }
      return false;
    }
  }

  private async reconcileOrder(order: DueOrder, provider: ChannelName, adapter: ChannelAdapter) {
    recordMetric('ReconcileChecked', { dimensions: { provider } });
    // Asked only where it was placed: after a gateway change (or for an order placed before the gateway was
    // recorded) the new host is never sent the merchant key for it, and its answer could settle nothing.
    // Its callback still settles it.
    let placedAt: string | undefined;
    try {
      placedAt = (await this.deps.orders.get(order.id))?.gateway_origin;
    } catch (error) {
      log.error('payment reconciliation could not read an order', { order_id: order.id, error });
      return this.failed(order, provider, 'read_error');
    }
    if (placedAt !== adapter.queryOrigin) {
      return this.failed(order, provider, 'gateway_changed', placedAt ? undefined : 'no gateway recorded');
    }
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

  private failed(order: DueOrder, provider: ChannelName, reason: string, detail?: string): Outcome {
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
