// The `infra` settings of what a stage may spend (docs/DEPLOYMENT.md "Cost guardrails"): its monthly AWS
// Budget and the thresholds of its cost alarms, both required in prod (docs/DESIGN.md 23).
import * as z from '#lib/platform/zod.ts';

const positiveWhole = z.number().check(z.int(), z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER));
const percents = (fallback: number[]) =>
  z._default(
    z.array(z.number().check(z.int(), z.minimum(1), z.maximum(1000))).check(z.minLength(1), z.maxLength(5)),
    fallback,
  );

/** The fields of the `infra` schema (infra/infra-settings.ts); false turns one off. */
export const COST_SETTINGS = {
  /**
   * A monthly AWS Budget of the account's cost, alerting the alarm topic when the actual spend passes each
   * `actual_percent` of `monthly_usd` and the forecast each `forecast_percent`.
   */
  budget: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({
        monthly_usd: positiveWhole,
        actual_percent: percents([80, 100]),
        forecast_percent: percents([100]),
      }),
    ]),
  ),
  /**
   * Alarms (infra/cost-alarms.ts) on the month's estimated charges, on CDN bytes and requests and render
   * invocations in an hour, and on the bucket's size (docs/CAPACITY.md derives prod's from its budget).
   * Billing and CDN figures exist only in us-east-1.
   */
  cost_alarms: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({
        billing_usd: positiveWhole,
        cdn_bytes_per_hour: positiveWhole,
        cdn_requests_per_hour: positiveWhole,
        render_invocations_per_hour: positiveWhole,
        bucket_bytes: positiveWhole,
      }),
    ]),
  ),
};

type CostFile = { [Key in keyof typeof COST_SETTINGS]?: z.infer<(typeof COST_SETTINGS)[Key]> };

export interface CostSettings {
  budget?: { monthlyUsd: number; actualPercent: number[]; forecastPercent: number[] };
  costAlarms?: {
    billingUsd: number;
    cdnBytesPerHour: number;
    cdnRequestsPerHour: number;
    renderInvocationsPerHour: number;
    bucketBytes: number;
  };
}

export function costSettingsOf({ budget, cost_alarms: alarms }: CostFile): CostSettings {
  return {
    ...(budget
      ? {
          budget: {
            monthlyUsd: budget.monthly_usd,
            actualPercent: budget.actual_percent,
            forecastPercent: budget.forecast_percent,
          },
        }
      : {}),
    ...(alarms
      ? {
          costAlarms: {
            billingUsd: alarms.billing_usd,
            cdnBytesPerHour: alarms.cdn_bytes_per_hour,
            cdnRequestsPerHour: alarms.cdn_requests_per_hour,
            renderInvocationsPerHour: alarms.render_invocations_per_hour,
            bucketBytes: alarms.bucket_bytes,
          },
        }
      : {}),
  };
}

/** A prod stage's: it says what it expects to spend and alarms on what costs, or says false. */
export function costProblems(infra: CostFile): string[] {
  const missing = (key: keyof CostFile, why: string) =>
    infra[key] === undefined ? [`infra.${key}: ${why}`] : [];
  return [
    ...missing('budget', 'a prod stage states the monthly spend it expects (monthly_usd), or false'),
    ...missing('cost_alarms', 'a prod stage alarms on what costs (docs/CAPACITY.md derives them), or false'),
  ];
}
