// The payments routes' request bodies and answers, as schemas: the API document (docs/openapi.json) is
// generated from them and the contract tests hold every answer to them.

import { MAX_PLAN_DURATION_DAYS, MAX_PLAN_QUOTA_BYTES, MAX_PLAN_RETENTION_DAYS } from '#lib/billing/plans.ts';
import { type ChannelName, PLAIN_FIELDS, SECRET_FIELDS, type SettingsPatch } from '#lib/billing/settings.ts';
import { WATERMARK_POSITIONS } from '#lib/files/watermark.ts';
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import * as z from '#lib/platform/zod.ts';
import { nameCharacters, timestamp } from './common.ts';

const ORDER_STATUSES = ['pending', 'paid', 'cancelled', 'expired', 'failed', 'refunded'] as const;

/** A plan's watermark (docs/IMAGES.md "Watermarks"): a text, or an image (a stored file's key). */
const watermarkSchema = z
  .object({
    text: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
    image: z.optional(z.string().check(z.regex(/^\d{4}\/\d{2}\/\d{2}\/[^/]+$/, 'must be a stored file key'))),
    position: z.enum(WATERMARK_POSITIONS),
    opacity: z.number().check(z.minimum(0), z.maximum(1)),
    min_size: z.number().check(z.int(), z.minimum(0), z.maximum(10_000)),
  })
  .check(
    z.refine((mark) => (mark.text === undefined) !== (mark.image === undefined), 'give a text or an image'),
  );

export const planView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  amount_cents: z.number().check(z.int()),
  active: z.boolean(),
  quota_bytes: z.nullable(z.number().check(z.int(), z.minimum(0))),
  bandwidth_bytes: z.nullable(z.number().check(z.int(), z.minimum(0))),
  duration_days: z.number().check(z.int(), z.minimum(0)),
  watermark: z.nullable(watermarkSchema),
  retention_days: z.nullable(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_PLAN_RETENTION_DAYS))),
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

const quoteFields = {
  amount_cents: z.number().check(z.int()),
  discount_cents: z.number().check(z.int()),
  final_cents: z.number().check(z.int()),
};
/** One plan's quote (`plan_id` asked), or without `plan_id` each plan on sale the code can be used on. */
export const couponQuoteView = z.union([
  z.object({ code: z.string(), ...quoteFields }),
  z.object({ code: z.string(), plans: z.array(z.object({ plan_id: z.string(), ...quoteFields })) }),
]);

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

export const MAX_AMOUNT_CENTS = 100_000_000_00; // 100 million yuan, the largest amount the channels accept
/** A plan's bytes (storage granted, or served a month): whole bytes up to 1 PiB, or null; one problem each. */
const planBytes = z.nullable(
  z.number().check(
    z.minimum(0, { message: 'must be 0 or more', abort: true }),
    z.maximum(MAX_PLAN_QUOTA_BYTES, {
      message: `must be at most ${MAX_PLAN_QUOTA_BYTES} (1 PiB)`,
      abort: true,
    }),
    z.int('must be a whole number of bytes'),
  ),
);

export const planBody = z.object({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100), nameCharacters()),
  description: z.optional(z.string().check(z.trim(), z.maxLength(1000))),
  amount_cents: z.number().check(z.int(), z.minimum(1), z.maximum(MAX_AMOUNT_CENTS)),
  active: z.optional(z.boolean()),
  // Storage the plan grants (docs/DESIGN.md 11): whole bytes, or null for none; days, 0 for permanent.
  // One problem per field: the first failed check ends the field's checks.
  quota_bytes: z.optional(planBytes),
  // Bytes served a month (docs/UPLOADS.md "Bandwidth"): whole bytes, or null for unlimited.
  bandwidth_bytes: z.optional(planBytes),
  // Null: none (docs/IMAGES.md "Watermarks").
  watermark: z.optional(z.nullable(watermarkSchema)),
  duration_days: z.optional(
    z.number().check(
      z.minimum(0, { message: 'must be 0 (permanent) or more', abort: true }),
      z.maximum(MAX_PLAN_DURATION_DAYS, {
        message: `must be at most ${MAX_PLAN_DURATION_DAYS}`,
        abort: true,
      }),
      z.int('must be a whole number of days'),
    ),
  ),
  // Days an upload without an expiry of its own keeps (docs/UPLOADS.md "Expiring uploads"); null: none.
  retention_days: z.optional(
    z.nullable(
      z.number().check(
        z.minimum(1, { message: 'must be 1 or more (null: none)', abort: true }),
        z.maximum(MAX_PLAN_RETENTION_DAYS, {
          message: `must be at most ${MAX_PLAN_RETENTION_DAYS}`,
          abort: true,
        }),
        z.int('must be a whole number of days'),
      ),
    ),
  ),
});

export const couponCode = z.string().check(z.maxLength(64), nameCharacters());

export const orderBody = z.object({
  plan_id: z.string().check(z.trim(), z.minLength(1), z.maxLength(64)),
  provider: z.optional(z.enum(PROVIDERS)),
  // docs/PAYMENTS-GUIDE.md "Coupons": any unusable code is 400 `coupon: cannot be used`.
  coupon_code: z.optional(couponCode),
});

export const count = (minimum: number) =>
  z.number().check(z.int(), z.minimum(minimum), z.maximum(1_000_000_000));
export const instant = z.string().check(
  z.refine((value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)), {
    message: 'must be an ISO 8601 date and time',
  }),
);

export const couponBody = z.object({
  code: z.string().check(z.regex(/^[A-Za-z0-9_-]{3,32}$/, 'must be 3 to 32 of A-Z a-z 0-9 _ -')),
  percent_off: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(100))),
  amount_off_cents: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_AMOUNT_CENTS))),
  min_amount_cents: z.optional(z.number().check(z.int(), z.minimum(0), z.maximum(MAX_AMOUNT_CENTS))),
  max_redemptions: z.optional(count(1)),
  per_account_limit: z.optional(count(1)),
  starts_at: z.optional(instant),
  ends_at: z.optional(instant),
  plan_ids: z.optional(
    z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.minLength(1), z.maxLength(100)),
  ),
});

export const couponPatch = z.object({
  active: z.optional(z.boolean()),
  ends_at: z.optional(z.nullable(instant)),
  max_redemptions: z.optional(z.nullable(count(1))),
});

export const validateBody = z.object({
  code: couponCode,
  plan_id: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(64))),
});

export const refundBody = z.object({
  amount_cents: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_AMOUNT_CENTS))),
  reason: z.string().check(z.trim(), z.minLength(1), z.maxLength(500)),
});

export const cashierQuery = z.object({ token: z.optional(z.string().check(z.maxLength(4096))) });
export const planList = z.array(planView);
export const planPatch = z.partial(planBody);
export const gatewayList = z.array(z.enum(PROVIDERS));

const KEY_MAX = 16_384;
const text = (max: number) => z.optional(z.nullable(z.string().check(z.maxLength(max))));
const enabled = () => z.optional(z.boolean());

/** PUT /api/v1/admin/payment: any subset of the GET shape, secrets under their own names. */
export const settingsPatchSchema = z.object({
  default_gateway: z.optional(z.enum(PROVIDERS)),
  mock: z.optional(z.object({ enabled: enabled() })),
  channel_a: z.optional(
    z.object({
      enabled: enabled(),
      app_id: text(64),
      seller_id: text(64),
      gateway_url: text(512),
      private_key: text(KEY_MAX),
      public_key: text(KEY_MAX),
    }),
  ),
  channel_b: z.optional(
    z.object({
      enabled: enabled(),
      app_id: text(64),
      mch_id: text(64),
      serial_no: text(128),
      platform_serial_no: text(128),
      api_base_url: text(512),
      private_key: text(KEY_MAX),
      api_v3_key: text(128),
      platform_public_key: text(KEY_MAX),
    }),
  ),
  channel_c: z.optional(
    z.object({
      enabled: enabled(),
      pid: text(64),
      gateway_url: text(512),
      api_url: text(512),
      submit_url: text(512),
      pay_type: text(32),
      key: text(512),
    }),
  ),
  // The acting administrator's password: required when a key or a gateway URL changes (gateway-settings.ts).
  current_password: z.optional(z.string().check(z.maxLength(1024))),
}) satisfies z.ZodMiniType<SettingsPatch>;
