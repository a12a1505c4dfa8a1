// Lambda entry of the `payments` group: plans, gateways, orders, confirmation paths, payment settings and
// the hosted mock cashier (docs/SPEC.md 2.4, 2.5, 4.3; docs/DESIGN.md 7).

import { clientOf } from '#lib/accounts/client.ts';
import { CASHIER_PAGE_HEADERS } from '#lib/billing/cashier.ts';
import type { PageResult } from '#lib/billing/mock-cashier.ts';
import { MAX_PLAN_DURATION_DAYS, MAX_PLAN_QUOTA_BYTES } from '#lib/billing/plans.ts';
import { settingsPatchSchema } from '#lib/billing/settings.ts';
import {
  adminOrderView,
  couponQuoteView,
  couponView,
  deletedView,
  orderView,
  pageOf,
  planView,
  settingsView,
} from '#lib/billing/views.ts';
import { errors } from '#lib/core/errors.ts';
import { created, html, ok } from '#lib/http/envelope.ts';
import { statusOf } from '#lib/http/errors.ts';
import type { FrontDoorOptions } from '#lib/http/front-door.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import { pageQuery } from '#lib/platform/db/paging.ts';
import * as z from '#lib/platform/zod.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type PaymentsDeps, paymentsDeps } from './deps.ts';
import { needs } from './needs.ts';

const MAX_AMOUNT_CENTS = 100_000_000_00; // 100 million yuan, the largest amount the channels accept

const planBody = z.object({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(100)),
  description: z.optional(z.string().check(z.trim(), z.maxLength(1000))),
  amount_cents: z.number().check(z.int(), z.minimum(1), z.maximum(MAX_AMOUNT_CENTS)),
  active: z.optional(z.boolean()),
  // Storage the plan grants (docs/DESIGN.md 11): whole bytes, or null for none; days, 0 for permanent.
  // One problem per field: the first failed check ends the field's checks.
  quota_bytes: z.optional(
    z.nullable(
      z.number().check(
        z.minimum(0, { message: 'must be 0 or more', abort: true }),
        z.maximum(MAX_PLAN_QUOTA_BYTES, {
          message: `must be at most ${MAX_PLAN_QUOTA_BYTES} (1 PiB)`,
          abort: true,
        }),
        z.int('must be a whole number of bytes'),
      ),
    ),
  ),
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
});

const couponCode = z.string().check(z.maxLength(64));

const orderBody = z.object({
  plan_id: z.string().check(z.trim(), z.minLength(1), z.maxLength(64)),
  provider: z.optional(z.enum(PROVIDERS)),
  // docs/DESIGN.md 17: an unusable code is 400 `coupon: <why>`.
  coupon_code: z.optional(couponCode),
});

const count = (minimum: number) => z.number().check(z.int(), z.minimum(minimum), z.maximum(1_000_000_000));
const instant = z.string().check(
  z.refine((value) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)), {
    message: 'must be an ISO 8601 date and time',
  }),
);

const couponBody = z.object({
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

const couponPatch = z.object({
  active: z.optional(z.boolean()),
  ends_at: z.optional(z.nullable(instant)),
  max_redemptions: z.optional(z.nullable(count(1))),
});

const validateBody = z.object({
  code: couponCode,
  plan_id: z.string().check(z.trim(), z.minLength(1), z.maxLength(64)),
});

const refundBody = z.object({
  amount_cents: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_AMOUNT_CENTS))),
  reason: z.string().check(z.trim(), z.minLength(1), z.maxLength(500)),
});

const cashierQuery = z.object({ token: z.optional(z.string().check(z.maxLength(4096))) });

const callerId = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

function cashierResult(page: PageResult): HttpResult {
  const result = html(page.html, page.refusal ? statusOf(page.refusal) : 200);
  return { ...result, headers: { ...result.headers, ...CASHIER_PAGE_HEADERS } };
}

/** The payments group over the given dependencies (tests build theirs with the same builders). */
export function createPaymentsHandler(deps: () => PaymentsDeps, options: FrontDoorOptions = {}) {
  return createGroupHandler(
    'payments',
    {
      'GET /api/v1/plans': defineRoute({
        response: z.array(planView),
        run: async () => ok(await deps().plans.list(true)),
      }),
      'GET /api/v1/admin/plans': defineRoute({
        response: z.array(planView),
        run: async () => ok(await deps().plans.list(false)),
      }),
      'POST /api/v1/admin/plans': defineRoute({
        body: planBody,
        response: planView,
        successStatus: 201,
        run: async (request) => created(await deps().plans.create(request.body)),
      }),
      'PATCH /api/v1/admin/plans/{id}': defineRoute({
        body: z.partial(planBody),
        response: planView,
        run: async (request) => ok(await deps().plans.update(request.params.id!, request.body)),
      }),
      'DELETE /api/v1/admin/plans/{id}': defineRoute({
        summary: 'Deletes a plan (orders keep their copy of its terms).',
        response: deletedView,
        run: async (request) => ok(await deps().plans.delete(request.params.id!)),
      }),

      'GET /api/v1/payment-gateways': defineRoute({
        summary: 'The registered providers, the default first.',
        response: z.array(z.enum(PROVIDERS)),
        run: async () => ok(await deps().settings.listGateways()),
      }),

      'POST /api/v1/orders': defineRoute({
        body: orderBody,
        summary: 'Places an order for a plan; the price comes from the plan.',
        response: orderView,
        successStatus: 201,
        errors: [502],
        run: async (request) =>
          created(await deps().orders.createOrder(callerId(request), request.body, request.sourceIp)),
      }),
      'GET /api/v1/orders': defineRoute({
        query: pageQuery,
        response: pageOf(orderView),
        run: async (request) =>
          ok(await deps().orders.listOwnOrders(callerId(request), request.query.limit, request.query.cursor)),
      }),
      'GET /api/v1/orders/{id}': defineRoute({
        response: orderView,
        run: async (request) => ok(await deps().orders.getOwnOrder(callerId(request), request.params.id!)),
      }),
      'POST /api/v1/orders/{id}/cancel': defineRoute({
        response: orderView,
        run: async (request) => ok(await deps().orders.cancelOwnOrder(callerId(request), request.params.id!)),
      }),
      'POST /api/v1/orders/{id}/pay': defineRoute({
        summary: 'The owner pays a mock order (any other provider: 403).',
        response: orderView,
        run: async (request) =>
          ok(await deps().orders.payOwnMockOrder(callerId(request), request.params.id!)),
      }),

      'GET /api/v1/admin/orders': defineRoute({
        query: pageQuery,
        response: pageOf(adminOrderView),
        run: async (request) =>
          ok(await deps().orders.listAllOrders(request.query.limit, request.query.cursor)),
      }),
      'POST /api/v1/admin/orders/{id}/refund': defineRoute({
        summary:
          'Refunds a paid order in full (default) or in part, once per Idempotency-Key header (docs/DESIGN.md 17).',
        body: refundBody,
        response: adminOrderView,
        run: async (request) =>
          ok(
            await deps().orders.presentForAdmin(
              await deps().billing.refunds.refund(
                request.params.id!,
                request.body,
                request.headers['idempotency-key'],
              ),
            ),
          ),
      }),
      'POST /api/v1/admin/coupons': defineRoute({
        body: couponBody,
        response: couponView,
        successStatus: 201,
        run: async (request) => created(await deps().billing.coupons.create(request.body)),
      }),
      'GET /api/v1/admin/coupons': defineRoute({
        query: pageQuery,
        response: pageOf(couponView),
        run: async (request) =>
          ok(await deps().billing.coupons.list(request.query.limit, request.query.cursor)),
      }),
      'PATCH /api/v1/admin/coupons/{id}': defineRoute({
        body: couponPatch,
        response: couponView,
        run: async (request) => ok(await deps().billing.coupons.update(request.params.id!, request.body)),
      }),
      'DELETE /api/v1/admin/coupons/{id}': defineRoute({
        summary: 'Deletes a coupon (orders keep their copy of its code and discount).',
        response: deletedView,
        run: async (request) => ok(await deps().billing.coupons.delete(request.params.id!)),
      }),
      'POST /api/v1/coupons/validate': defineRoute({
        summary:
          'What a coupon code takes off a plan for the caller now; an unusable code is 400 coupon: <why>.',
        body: validateBody,
        response: couponQuoteView,
        run: async (request) => {
          const quote = await deps().orders.quoteCoupon(
            callerId(request),
            request.body.code,
            request.body.plan_id,
          );
          return ok({
            code: quote.code,
            amount_cents: quote.amount_cents,
            discount_cents: quote.discount_cents,
            final_cents: quote.final_cents,
          });
        },
      }),
      'POST /api/v1/admin/orders/{id}/pay': defineRoute({
        summary: 'An administrator writes off a manual order (any other provider: 403).',
        response: adminOrderView,
        run: async (request) => ok(await deps().orders.writeOffManualOrder(request.params.id!)),
      }),

      'GET /api/v1/admin/payment': defineRoute({
        summary: 'Payment settings; secrets only as <field>_set.',
        response: settingsView,
        run: async () => ok(await deps().settings.readSettings()),
      }),
      'PUT /api/v1/admin/payment': defineRoute({
        body: settingsPatchSchema,
        response: settingsView,
        summary:
          'Saves any subset of the settings; empty or absent secrets keep the stored ones. Changing a key or a gateway URL needs current_password.',
        run: async (request) => {
          const { account } = requirePrincipal(request);
          if (!account) throw errors.unauthorized();
          return ok(
            await deps().settings.updateSettings(request.body, { account, client: clientOf(request) }),
          );
        },
      }),

      'GET /pay/mock/{id}': defineRoute({
        summary: 'The hosted mock cashier page of a signed link.',
        query: cashierQuery,
        responseContentType: 'text/html',
        responseDescription: 'The cashier page (also for refusals: an invalid link, an order not payable).',
        run: async (request) =>
          cashierResult(await deps().cashier.openCashier(request.params.id!, request.query.token)),
      }),
      'POST /pay/mock/{id}': defineRoute({
        summary: 'The cashier page’s Pay button: settles like POST /api/v1/orders/{id}/pay.',
        query: cashierQuery,
        requestContentType: 'application/x-www-form-urlencoded',
        responseContentType: 'text/html',
        responseDescription: 'The cashier page showing the order as it now is.',
        maxBodyBytes: 4096,
        run: async (request) =>
          cashierResult(await deps().cashier.payAtCashier(request.params.id!, request.query.token)),
      }),
    },
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      // Only through the CDN, which also names the payer's address channel_c's mapi.php is told.
      frontDoor: options.frontDoor,
    },
  );
}

export const handler = createPaymentsHandler(paymentsDeps, {
  frontDoor: groupFrontDoor('payments', needs, config),
});
