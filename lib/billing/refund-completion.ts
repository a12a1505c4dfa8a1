// A refund's result (docs/DESIGN.md 17): a channel's refund notice, the channel's answer when it is asked
// (refunds.ts), or reconciliation of refunds left pending completes or fails it once, with one conditional
// transaction; a refund that completes the order's amount takes the grant back and writes order.refunded,
// and the buyer is told by mail.
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { errors } from '#lib/core/errors.ts';
import { planLinkItem } from '#lib/files/owner-rules.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import { readShards, type ShardedListing } from '#lib/platform/db/shards.ts';
import {
  type Clock,
  ConditionFailedError,
  type Key,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { refundNoticeMail } from '#lib/platform/mail/templates.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { ORDER_ID_PATTERN, type StoredOrder } from './model.ts';
import { ORDER_REFUNDED, orderRefundedDetail } from './order-events.ts';
import { type OrderRepository, orderKey } from './orders.ts';
import { orderEventOutboxPut } from './outbox.ts';
import type { ReconcileSchedule } from './reconcile-schedule.ts';
import type { GatewaySource } from './registry.ts';
import { renewalItem } from './renewals.ts';
import type { ChannelName } from './settings.ts';

/** A pending channel refund on the reconciler's schedule (the `due` index under `refundsdue#<n>`). */
export const refundCheckKey = (refundId: string): Key => ({ pk: `refundcheck#${refundId}`, sk: 'check' });
export const refundsDue = (count: number): ShardedListing => ({ index: 'due', name: 'refundsdue', count });

/** Tries when concurrent refunds of the same order (other keys) change it between the read and the write. */
export const REFUND_ATTEMPTS = 8;

export interface RefundCompletionDeps {
  table: Table;
  orders: OrderRepository;
  quota: QuotaService;
  /** The buyer's address. */
  accounts: Pick<AccountRepository, 'get'>;
  /** The buyer's notice. */
  mailer: Mailer;
  listingShards: number;
  clock: Clock;
  /** The channels as enabled now: reconciliation asks each pending refund's channel. */
  gateways: GatewaySource;
  /** When a pending channel refund is asked about again (the payment reconciliation's back-off). */
  schedule: ReconcileSchedule;
}

export class RefundCompletion {
  constructor(private readonly deps: RefundCompletionDeps) {}

  /**
   * Reconciliation of refunds left pending (docs/DESIGN.md 17): each whose check is due is asked about at its
   * channel (the gateway of its order); a result completes it as a notice would, no result moves its next
   * check later (the same back-off as pending payments) until its checks are spent: then it leaves the
   * schedule, pending, for a person. Never throws for one refund. Answers how many it completed.
   */
  async reconcilePending(limit: number): Promise<number> {
    const { table, clock, schedule } = this.deps;
    const now = clock();
    const page = await readShards(table, refundsDue(this.deps.listingShards), {
      limit,
      order: 'oldest-first',
      to: `${now.toISOString()}~`,
    });
    if (page.items.length === 0) return 0;
    const { registry } = await this.deps.gateways.current();
    let completed = 0;
    for (const listed of page.items) {
      const refundId = String(listed.pk).slice('refundcheck#'.length);
      try {
        const entry = await table.get(refundCheckKey(refundId));
        if (!entry || entry.gsi3sk !== listed.gsi3sk) continue;
        const orderId = String(entry.id);
        const checks = Number(entry.reconcile_checks ?? 0) + 1;
        const adapter = registry.channel(String(entry.provider) as ChannelName);
        const order = await this.deps.orders.get(orderId);
        const verdict =
          adapter?.queryRefund && order?.gateway_origin === adapter.queryOrigin
            ? await adapter.queryRefund(orderId, refundId)
            : ({ kind: 'unknown', reason: 'unreachable' } as const);
        if (verdict.kind === 'succeeded' || verdict.kind === 'refused') {
          const result = verdict.kind === 'succeeded' ? 'succeeded' : 'failed';
          await this.complete(orderId, Number(entry.refund_index), refundId, result);
          completed += 1;
          continue;
        }
        const next = schedule.nextCheck(now, checks, Number.MAX_SAFE_INTEGER / 2);
        if (!next || checks >= schedule.maxChecks) {
          log.error('a channel refund is still pending after its checks; check it at the channel', {
            order_id: orderId,
            refund_id: refundId,
          });
          await table.update(refundCheckKey(refundId), {
            UpdateExpression: 'SET reconcile_checks = :checks REMOVE gsi3pk, gsi3sk',
            ExpressionAttributeValues: { ':checks': checks },
          });
          continue;
        }
        await table.update(refundCheckKey(refundId), {
          UpdateExpression: 'SET gsi3sk = :next, reconcile_checks = :checks',
          ConditionExpression: 'gsi3sk = :seen',
          ExpressionAttributeValues: {
            ':next': `${next.toISOString()}#${refundId}`,
            ':checks': checks,
            ':seen': entry.gsi3sk,
          },
        });
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) {
          log.error('a pending refund could not be reconciled', { refund_id: refundId, error });
        }
      }
    }
    return completed;
  }

  /**
   * A channel's refund notice (already verified by its adapter): the result of our refund `refundNo` of
   * order `outTradeNo`, applied once. Unknown refunds are refused (the channel's failure reply).
   */
  async completeByNotice(
    provider: string,
    notice: { outTradeNo: string; refundNo: string; result: 'succeeded' | 'failed' | 'pending' },
  ): Promise<'applied' | 'unknown'> {
    const order = ORDER_ID_PATTERN.test(notice.outTradeNo)
      ? await this.deps.orders.get(notice.outTradeNo)
      : undefined;
    const index = order?.refunds?.findIndex((refund) => refund.id === notice.refundNo) ?? -1;
    if (!order || order.provider !== provider || index < 0) return 'unknown';
    if (notice.result !== 'pending') await this.complete(order.id, index, notice.refundNo, notice.result);
    return 'applied';
  }

  /**
   * A pending refund's result: one conditional transaction on the refund still pending (so a result lands
   * once). A success that completes the amount sets `refunded`, takes back the grant and writes
   * order.refunded; a failure gives its amount back to what is left.
   */
  async complete(orderId: string, index: number, refundId: string, result: 'succeeded' | 'failed') {
    for (let attempt = 0; attempt < REFUND_ATTEMPTS; attempt += 1) {
      const order = (await this.deps.orders.get(orderId))!;
      const refund = order.refunds?.[index];
      if (!refund || refund.id !== refundId || refund.status !== 'pending') return order;
      const now = this.deps.clock();
      const at = isoWithOffset(now);
      // What the order's refunds that succeeded add up to once this one has its result.
      const succeeded = (order.refunds ?? [])
        .filter((item, position) => (position === index ? result : item.status) === 'succeeded')
        .reduce((sum, item) => sum + item.amount_cents, 0);
      const full = result === 'succeeded' && succeeded === order.amount_cents && order.status === 'paid';
      const values: Record<string, unknown> = {
        ':id': refundId,
        ':pending': 'pending',
        ':result': result,
        ':at': at,
      };
      const sets = [`refunds[${index}].#status = :result`, 'updated_at = :at'];
      if (result === 'failed') {
        values[':amount'] = refund.amount_cents;
        sets.push('refunded_cents = refunded_cents - :amount');
      }
      if (full) {
        values[':refunded'] = 'refunded';
        sets.push('#status = :refunded', 'refunded_at = :at');
      }
      const closing = full ? await this.fullRefundItems(order, at, now) : [];
      const after: StoredOrder = {
        ...order,
        refunds: order.refunds!.map((item, position) =>
          position === index ? { ...item, status: result } : item,
        ),
        refunded_cents: (order.refunded_cents ?? 0) - (result === 'failed' ? refund.amount_cents : 0),
        updated_at: at,
        ...(full ? { status: 'refunded' as const } : {}),
      };
      try {
        await this.deps.table.transact([
          {
            Update: {
              Key: orderKey(orderId),
              UpdateExpression: `SET ${sets.join(', ')}`,
              ConditionExpression: `refunds[${index}].id = :id AND refunds[${index}].#status = :pending`,
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: values,
            },
          },
          // Settled: off the reconciler's schedule of pending refunds.
          { Delete: { Key: refundCheckKey(refundId) } },
          ...closing,
        ]);
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        continue;
      }
      log.info('channel refund completed', { order_id: orderId, refund_id: refundId, result, full });
      if (result === 'succeeded') await this.notify(after, refund.amount_cents);
      return after;
    }
    throw errors.conflict('The order is being refunded by other requests; try again');
  }

  /**
   * What a refund that completes the order's amount writes beside it: what is left of the order in the
   * buyer's grant taken back (with its renewal entry), and the order.refunded event.
   */
  async fullRefundItems(order: StoredOrder, at: string, now: Date): Promise<TransactItem[]> {
    const { listingShards } = this.deps;
    const takeBack = order.grant
      ? await this.deps.quota.takeBackFor(order.user_id, {
          plan_id: order.plan_id,
          quota_bytes: order.quota_bytes ?? order.grant.quota_bytes,
          duration_days: order.duration_days ?? 0,
        })
      : undefined;
    const grant = takeBack ? takeBack.grant : (order.grant ?? null);
    return [
      ...(takeBack
        ? [
            takeBack.item,
            renewalItem(order.user_id, takeBack.grant, listingShards),
            planLinkItem(order.user_id, takeBack.grant, now, listingShards),
          ]
        : []),
      orderEventOutboxPut(ORDER_REFUNDED, orderRefundedDetail(order, at, grant), now, listingShards),
    ];
  }

  /** The buyer's mail; a failure is logged, never the refund's (it is done). */
  async notify(order: StoredOrder, amount: number): Promise<void> {
    try {
      const buyer = await this.deps.accounts.get(order.user_id);
      if (!buyer?.email) return;
      await this.deps.mailer.send(
        refundNoticeMail(buyer.email, {
          orderId: order.id,
          planName: order.plan_name,
          amountCents: amount,
          refundedCents: order.refunded_cents ?? amount,
          totalCents: order.amount_cents,
        }),
      );
    } catch (error) {
      log.warn('the refund notice could not be sent', { order_id: order.id, error });
    }
  }
}
