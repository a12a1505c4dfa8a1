// What the payments routes answer, as schemas: the API document (docs/openapi.json) is generated from
// them and the contract tests hold every answer to them.
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import * as z from '#lib/platform/zod.ts';
import { type ChannelName, PLAIN_FIELDS, SECRET_FIELDS } from './settings.ts';

const timestamp = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/));
const ORDER_STATUSES = ['pending', 'paid', 'cancelled', 'expired', 'failed', 'refunded'] as const;

export const planView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  amount_cents: z.number().check(z.int()),
  active: z.boolean(),
  quota_bytes: z.nullable(z.number().check(z.int(), z.minimum(0))),
  duration_days: z.number().check(z.int(), z.minimum(0)),
  created_at: timestamp,
});

export const refundView = z.object({
  id: z.string(),
  amount_cents: z.number().check(z.int(), z.minimum(1)),
  reason: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  created_at: timestamp,
});

const orderBase = z.object({
  id: z.string().check(z.regex(/^[0-9A-Za-z]{1,32}$/)),
  user_id: z.string(),
  plan_id: z.string(),
  plan_name: z.string(),
  currency: z.literal('CNY'),
  status: z.enum(ORDER_STATUSES),
  trade_no: z.nullable(z.string()),
  pay_url: z.nullable(z.string()),
  qr_code: z.nullable(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
  paid_at: z.nullable(timestamp),
  // docs/DESIGN.md 17: the plan's price, the coupon's discount, and refunds.
  original_cents: z.number().check(z.int(), z.minimum(0)),
  discount_cents: z.number().check(z.int(), z.minimum(0)),
  coupon_code: z.nullable(z.string()),
  refunded_cents: z.number().check(z.int(), z.minimum(0)),
  refunds: z.array(refundView),
});

/** What is paid is at least a cent, except on a `free` order (a coupon took the whole price). */
export const orderView = z.union([
  z.extend(orderBase, {
    amount_cents: z.number().check(z.int(), z.minimum(1)),
    provider: z.enum(PROVIDERS),
  }),
  z.extend(orderBase, { amount_cents: z.literal(0), provider: z.literal('free') }),
]);

const adminFields = {
  // The buyer's username (null once the account is gone): docs/PAYMENTS-GUIDE.md "Orders in the back office".
  username: z.nullable(z.string()),
  paid_via: z.nullable(z.string()),
  late_payment: z.boolean(),
  status_before_payment: z.nullable(z.string()),
  extra_trade_nos: z.array(z.string()),
  expires_at: timestamp,
};

export const adminOrderView = z.union([
  z.extend(orderBase, {
    amount_cents: z.number().check(z.int(), z.minimum(1)),
    provider: z.enum(PROVIDERS),
    ...adminFields,
  }),
  z.extend(orderBase, { amount_cents: z.literal(0), provider: z.literal('free'), ...adminFields }),
]);

export const couponView = z.object({
  id: z.string(),
  code: z.string(),
  percent_off: z.nullable(z.number().check(z.int())),
  amount_off_cents: z.nullable(z.number().check(z.int())),
  min_amount_cents: z.nullable(z.number().check(z.int())),
  max_redemptions: z.nullable(z.number().check(z.int())),
  per_account_limit: z.number().check(z.int(), z.minimum(1)),
  starts_at: z.nullable(z.string()),
  ends_at: z.nullable(z.string()),
  plan_ids: z.nullable(z.array(z.string())),
  active: z.boolean(),
  redemptions: z.number().check(z.int(), z.minimum(0)),
  created_at: timestamp,
  updated_at: timestamp,
});

export const couponQuoteView = z.object({
  code: z.string(),
  amount_cents: z.number().check(z.int()),
  discount_cents: z.number().check(z.int()),
  final_cents: z.number().check(z.int()),
});

export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.nullable(z.string()) });

const settingsSection = (name: ChannelName) =>
  z.object({
    enabled: z.boolean(),
    ...Object.fromEntries(PLAIN_FIELDS[name].map((field) => [field, z.nullable(z.string())])),
    ...Object.fromEntries(SECRET_FIELDS[name].map((field) => [`${field}_set`, z.boolean()])),
  });

/** Secrets appear only as `<field>_set` (docs/PAYMENTS-GUIDE.md). */
export const settingsView = z.object({
  default_gateway: z.enum(PROVIDERS),
  mock: z.object({ enabled: z.boolean() }),
  channel_a: settingsSection('channel_a'),
  channel_b: settingsSection('channel_b'),
  channel_c: settingsSection('channel_c'),
  notify_urls: z.record(z.string(), z.string()),
});

export const deletedView = z.object({ id: z.string(), deleted: z.literal(true) });
