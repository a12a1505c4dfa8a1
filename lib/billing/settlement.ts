// Settling an order: who may confirm it is fixed by its provider (docs/SPEC.md 4.3 rule 1), and settlement is
// one transaction whichever confirmation path gets there first: the order, the storage grant it buys and
// its order.paid event in the outbox (lib/billing/outbox.ts), which the outbox-drain function publishes.

import { errors } from '#lib/core/errors.ts';
import type { GrantTerms } from '#lib/files/quota-model.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import { type Clock, ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { effectiveStatus, type StoredOrder } from './model.ts';
import type { OrderRepository, SettleInput } from './orders.ts';
import type { PlanRepository } from './plans.ts';
import type { GatewaySource } from './registry.ts';

/**
 * Which confirmation path is knocking; each provider accepts exactly one (docs/SPEC.md 4.3 rule 1).
 * `reconciliation` is the channel's own answer to our query (docs/DESIGN.md 14): the same proof as a
 * verified callback, so it settles exactly as one does, recorded as `paid_via: reconciliation`.
 */
export type ConfirmPath = 'owner' | 'admin' | 'callback' | 'reconciliation' | 'free';

/** Tries: a lost race on the order ends at once (paid); the account's usage item may be busy longer. */
const MAX_SETTLE_ATTEMPTS = 8;

/** The owner's path (API or hosted cashier) is open to mock orders only, and only while mock is enabled. */
export async function requireMockCashier(order: StoredOrder, gateways: GatewaySource): Promise<void> {
  if (order.provider !== 'mock') {
    throw errors.forbidden(`A ${order.provider} order cannot be paid by its owner`);
  }
  const { registry } = await gateways.confirmed((held) => held.has('mock'));
  if (!registry.has('mock')) throw errors.forbidden('The mock cashier is disabled');
}

export interface SettlementDeps {
  orders: OrderRepository;
  /** Only for orders placed before quotas, which carry no copy of what they buy. */
  plans: PlanRepository;
  quota: QuotaService;
  clock: Clock;
}

export class Settlement {
  constructor(private readonly deps: SettlementDeps) {}

  /**
   * Moves the order to `paid` through one transaction conditional on the status it was read in, with
   * the grant it buys (decided on the account's grant as read now) and its order.paid event. Losing a race
   * re-reads and decides again: already paid means done (no second grant, no second event), anything else
   * is retried.
   */
  async confirm(
    initial: StoredOrder,
    path: ConfirmPath,
    tradeNo?: string,
  ): Promise<{ order: StoredOrder; settled: boolean }> {
    let order = initial;
    for (let attempt = 0; attempt < MAX_SETTLE_ATTEMPTS; attempt += 1) {
      const now = this.deps.clock();
      const status = effectiveStatus(order, now);
      // Refunded was paid: a confirmation of it changes nothing either.
      if (status === 'paid' || status === 'refunded') {
        await this.afterDuplicate(order, tradeNo, now);
        return { order, settled: false };
      }
      const input = settlementFor(path, status, now, tradeNo);
      try {
        const terms = await this.termsOf(order);
        const grant = terms ? await this.deps.quota.grantFor(order.user_id, terms) : undefined;
        const settled = await this.deps.orders.settle(order, input, grant);
        if (settled.late_payment) {
          log.warn('late payment recorded on an order that was no longer payable', {
            order_id: settled.id,
            provider: settled.provider,
            status_before_payment: settled.status_before_payment,
          });
        }
        recordMetric('OrdersPaid', { dimensions: { provider: settled.provider } });
        return { order: settled, settled: true };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        const current = await this.deps.orders.get(order.id);
        if (!current) throw error;
        // Still unpaid: the account's grant moved or the transaction met another; a short pause, then again.
        if (current.status !== 'paid') await pause(attempt);
        order = current;
      }
    }
    throw errors.conflict('The order is being changed by other requests; try again');
  }

  /** What the order buys: its own copy, or (placed before quotas) the plan as it is now. */
  private async termsOf(order: StoredOrder): Promise<GrantTerms | undefined> {
    const base = { order_id: order.id, plan_id: order.plan_id, plan_name: order.plan_name };
    if (order.duration_days !== undefined) {
      const { quota_bytes = null, duration_days, retention_days } = order;
      return { ...base, quota_bytes, duration_days, retention_days };
    }
    const plan = await this.deps.plans.get(order.plan_id);
    if (!plan || plan.quota_bytes === null) return undefined;
    const { quota_bytes, duration_days, retention_days } = plan;
    return { ...base, quota_bytes, duration_days, retention_days };
  }

  /** A confirmation of a paid order changes nothing, but a second trade number is kept for a refund. */
  private async afterDuplicate(order: StoredOrder, tradeNo: string | undefined, now: Date): Promise<void> {
    if (tradeNo && order.trade_no && tradeNo !== order.trade_no) {
      log.error('second channel payment reported for a paid order: possible double payment', {
        order_id: order.id,
        provider: order.provider,
        trade_no: order.trade_no,
        other_trade_no: tradeNo,
      });
      await this.deps.orders
        .recordExtraTradeNo(order.id, tradeNo, isoWithOffset(now))
        .catch((error: unknown) => {
          if (!(error instanceof ConditionFailedError)) throw error;
        });
    }
  }
}

function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
}

/** The write a path may make from the order's current status, or the 409 saying why it may not. */
function settlementFor(
  path: ConfirmPath,
  status: Exclude<ReturnType<typeof effectiveStatus>, 'paid' | 'refunded'>,
  now: Date,
  tradeNo: string | undefined,
): SettleInput {
  const paidAt = isoWithOffset(now);
  if (path === 'owner') {
    // A user cannot pay an order that is cancelled, failed, or past its time.
    if (status !== 'pending') throw errors.conflict(`Order is ${status} and can no longer be paid`);
    return { expectedStatus: 'pending', requireUnexpiredAt: now, via: 'mock', now, paidAt };
  }
  if (path === 'free') {
    // An order a coupon made free is settled as it is placed (docs/DESIGN.md 17).
    if (status !== 'pending') throw errors.conflict(`Order is ${status} and can no longer be paid`);
    return { expectedStatus: 'pending', via: 'free', now, paidAt };
  }
  if (path === 'admin') {
    // The administrator saw the money arrive; an expired manual order is still written off, flagged.
    if (status === 'pending') {
      return { expectedStatus: 'pending', requireUnexpiredAt: now, via: 'manual', now, paidAt };
    }
    if (status === 'expired') {
      return { expectedStatus: 'pending', lateFrom: 'expired', via: 'manual', now, paidAt };
    }
    throw errors.conflict(`Order is ${status} and can no longer be paid`);
  }
  // A verified callback (or the channel's answer to a query) means the money moved: it is recorded whatever
  // became of the order (docs/DESIGN.md 7).
  const base = { via: path, now, paidAt, ...(tradeNo ? { tradeNo } : {}) };
  if (status === 'pending') return { ...base, expectedStatus: 'pending' };
  if (status === 'expired') return { ...base, expectedStatus: 'pending', lateFrom: 'expired' };
  return { ...base, expectedStatus: status, lateFrom: status };
}
