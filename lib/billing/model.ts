// Plans and orders as stored and as clients see them (docs/DESIGN.md 7), their keys, ids and derived status.
import { randomBytes } from 'node:crypto';
import type { Grant } from '#lib/files/quota-model.ts';
import type { Watermark } from '#lib/files/watermark.ts';
import type { Provider } from '#lib/platform/config/schema.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export const CURRENCY = 'CNY';

export interface Plan {
  id: string;
  name: string;
  description: string;
  amount_cents: number;
  active: boolean;
  /** Storage the plan grants (docs/DESIGN.md 11); null: none. Plans stored before quotas read as null. */
  quota_bytes: number | null;
  /** Bytes served a month (docs/UPLOADS.md "Bandwidth"); null: unlimited (also plans stored before it). */
  bandwidth_bytes: number | null;
  /** How long the grant lasts; 0: permanent (also for plans stored before quotas). */
  duration_days: number;
  /** The mark on its owners' images (docs/IMAGES.md "Watermarks"); null: none. */
  watermark: Watermark | null;
  /** The grant's default retention of uploads in days (docs/UPLOADS.md "Expiring uploads"); null: none. */
  retention_days: number | null;
  created_at: string;
  updated_at: string;
}

/**
 * What is stored. `pending` past `deadline_at` is shown as `expired` (no sweeper writes it); `refunded`: paid,
 * then refunded in full (docs/DESIGN.md 17).
 */
export type StoredStatus = 'pending' | 'paid' | 'cancelled' | 'failed' | 'refunded';
export type OrderStatus = StoredStatus | 'expired';

/** How an order came to be paid; `reconciliation`: the channel reported it paid when we asked (docs/DESIGN.md 14). */
export type PaidVia = 'mock' | 'manual' | 'callback' | 'reconciliation' | 'free';

/** Who settles an order: a configured provider, or `free` for an order a coupon made zero (paid at once). */
export type OrderProvider = Provider | 'free';

export type RefundStatus = 'pending' | 'succeeded' | 'failed';

/** One refund of an order (docs/DESIGN.md 17), kept on the order in the order they were asked for. */
export interface RefundRecord {
  id: string;
  amount_cents: number;
  reason: string;
  status: RefundStatus;
  created_at: string;
  /** The Idempotency-Key it was asked with. */
  key?: string;
}

/** What an order is for, copied from its plan when it was placed: the same in every view of it. */
export interface OrderTerms {
  user_id: string;
  plan_id: string;
  plan_name: string;
  /** What is paid: the plan's price less any coupon's discount. */
  amount_cents: number;
  currency: typeof CURRENCY;
  provider: OrderProvider;
}

export interface StoredOrder extends OrderTerms {
  id: string;
  status: StoredStatus;
  trade_no?: string;
  pay_url?: string;
  qr_code?: string;
  created_at: string;
  updated_at: string;
  paid_at?: string;
  /** Epoch milliseconds after which an unpaid order is expired. Not `expires_at`: that is the table TTL. */
  deadline_ms: number;
  paid_via?: PaidVia;
  /** Set when a verified payment arrived for an order that was no longer payable (docs/DESIGN.md 7). */
  late_payment?: boolean;
  status_before_payment?: 'expired' | 'cancelled' | 'failed';
  /** Other channel trade numbers reported for this already-paid order: a possible double payment. */
  extra_trade_nos?: string[];
  failure_reason?: string;
  /**
   * What the order buys, copied from the plan when it was placed (like its name and price), so editing
   * the plan never changes it. Absent on orders placed before quotas: settlement reads the plan then.
   */
  quota_bytes?: number | null;
  duration_days?: number;
  retention_days?: number | null;
  /** The account's grant as this order's settlement wrote it (absent: the plan grants no storage). */
  grant?: Grant;
  /**
   * A channel order: the origin its channel's queries went to when it was placed (ChannelAdapter.queryOrigin).
   * Reconciliation asks about it there only (lib/billing/reconcile.ts).
   */
  gateway_origin?: string;
  /** The coupon it was placed with (docs/DESIGN.md 17): the code as written and the plan's price before it. */
  coupon_code?: string;
  original_cents?: number;
  discount_cents?: number;
  /** Refunds so far and their sum (succeeded and pending ones: what is no longer left to refund). */
  refunds?: RefundRecord[];
  refunded_cents?: number;
}

export interface OrderView extends OrderTerms {
  id: string;
  status: OrderStatus;
  trade_no: string | null;
  pay_url: string | null;
  qr_code: string | null;
  created_at: string;
  updated_at: string;
  paid_at: string | null;
  original_cents: number;
  discount_cents: number;
  coupon_code: string | null;
  refunded_cents: number;
  refunds: Array<Omit<RefundRecord, 'key'>>;
}

/** The administrator's view adds how and when the order was settled, and any flag on it. */
export interface AdminOrderView extends OrderView {
  username: string | null;
  paid_via: PaidVia | null;
  late_payment: boolean;
  status_before_payment: string | null;
  extra_trade_nos: string[];
  expires_at: string;
}

export function effectiveStatus(order: Pick<StoredOrder, 'status' | 'deadline_ms'>, now: Date): OrderStatus {
  return order.status === 'pending' && now.getTime() >= order.deadline_ms ? 'expired' : order.status;
}

/** Just the terms, in their usual order (answers and events list them alike). */
export function orderTerms(order: OrderTerms): OrderTerms {
  return {
    user_id: order.user_id,
    plan_id: order.plan_id,
    plan_name: order.plan_name,
    amount_cents: order.amount_cents,
    currency: order.currency,
    provider: order.provider,
  };
}

export function orderView(order: StoredOrder, now: Date, payUrl: string | null): OrderView {
  const status = effectiveStatus(order, now);
  // Only a pending order shows how to pay it: a paid, cancelled or expired one must not invite a payment.
  const payable = status === 'pending';
  return {
    id: order.id,
    ...orderTerms(order),
    status,
    trade_no: order.trade_no ?? null,
    pay_url: payable ? payUrl : null,
    qr_code: payable ? (order.qr_code ?? null) : null,
    created_at: order.created_at,
    updated_at: order.updated_at,
    paid_at: order.paid_at ?? null,
    original_cents: order.original_cents ?? order.amount_cents,
    discount_cents: order.discount_cents ?? 0,
    coupon_code: order.coupon_code ?? null,
    refunded_cents: order.refunded_cents ?? 0,
    refunds: (order.refunds ?? []).map(({ key: _key, ...refund }) => refund),
  };
}

/** An order as the back office sees it; `username` is the buyer's (null once the account is gone). */
export function adminOrderView(
  order: StoredOrder,
  now: Date,
  payUrl: string | null,
  username: string | null,
): AdminOrderView {
  return {
    ...orderView(order, now, payUrl),
    username,
    paid_via: order.paid_via ?? null,
    late_payment: order.late_payment ?? false,
    status_before_payment: order.status_before_payment ?? null,
    extra_trade_nos: order.extra_trade_nos ?? [],
    expires_at: isoWithOffset(new Date(order.deadline_ms)),
  };
}

export function planView(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description,
    amount_cents: plan.amount_cents,
    active: plan.active,
    quota_bytes: plan.quota_bytes,
    bandwidth_bytes: plan.bandwidth_bytes,
    duration_days: plan.duration_days,
    watermark: plan.watermark,
    retention_days: plan.retention_days,
    created_at: plan.created_at,
  };
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  let out = '';
  // 248 is the largest multiple of 62 below 256: rejection keeps every character equally likely.
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * An order id is the out_trade_no every channel receives: 32 characters of [0-9A-Za-z], the UTC time of
 * creation (yyyyMMddHHmmss, readable in channel back offices) then 18 random characters (~107 bits).
 */
export function newOrderId(now: Date): string {
  const stamp = now.toISOString().replace(/\D/g, '').slice(0, 14);
  return `${stamp}${randomBase62(18)}`;
}

export const ORDER_ID_PATTERN = /^[0-9A-Za-z]{1,32}$/;
