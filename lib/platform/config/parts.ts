// The building blocks of the settings' schema (lib/platform/config/schema.ts): value kinds, sections with
// defaults, a rate, and the payment channels' credential sections.
import * as z from '#lib/platform/zod.ts';

export const optionalText = z.optional(z.string().check(z.trim(), z.minLength(1)));
export const url = z.url({ protocol: /^https?$/ });
export const optionalUrl = z.optional(url);
/** A whole number from min to max, or `fallback` when absent. */
export const wholeNumber = (min: number, max: number, fallback: number) =>
  z._default(z.number().check(z.int(), z.minimum(min), z.maximum(max)), fallback);
export const flag = (fallback: boolean) => z._default(z.boolean(), fallback);

/** A section whose keys all have defaults or are optional: an absent section is `{}`, then filled in. */
export const section = <Shape extends z.core.$ZodLooseShape>(shape: Shape) =>
  z.prefault(z.object(shape), {} as z.input<z.ZodMiniObject<Shape>>);

/** A rate with a burst and a daily cap (lib/accounts/throttle.ts); 0 turns a part off. */
export const rateLimit = (fallback: { per_minute: number; burst: number; per_day: number }) =>
  section({
    per_minute: wholeNumber(0, 100_000, fallback.per_minute),
    burst: wholeNumber(1, 100_000, fallback.burst),
    per_day: wholeNumber(0, 10_000_000, fallback.per_day),
  });

/** docs/SPEC.md 8: the channel_b v3 key is exactly 32 bytes. */
function isThirtyTwoBytes(key: string): boolean {
  return Buffer.byteLength(key, 'utf8') === 32;
}

export const channelA = section({
  enabled: flag(false),
  app_id: optionalText,
  private_key: optionalText,
  public_key: optionalText,
  // Optional Alipay seller PID: when set, notifications must name it too (docs/PAYMENTS-GUIDE.md 1.7 step 5).
  seller_id: optionalText,
  gateway_url: optionalUrl,
});

export const channelB = section({
  enabled: flag(false),
  app_id: optionalText,
  mch_id: optionalText,
  serial_no: optionalText,
  private_key: optionalText,
  // docs/SPEC.md 8: the v3 key is exactly 32 bytes.
  api_v3_key: z.optional(z.string().check(z.refine(isThirtyTwoBytes, 'must be exactly 32 bytes'))),
  platform_public_key: optionalText,
  platform_serial_no: optionalText,
  api_base_url: optionalUrl,
});

export const channelC = section({
  enabled: flag(false),
  pid: optionalText,
  key: optionalText,
  gateway_url: optionalUrl,
  api_url: optionalUrl,
  submit_url: optionalUrl,
  pay_type: optionalText,
});
