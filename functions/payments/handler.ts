// Lambda entry of the `payments` group: plans, gateways, orders, confirmation paths, payment settings and
// the hosted mock cashier (docs/SPEC.md 2.4, 2.5, 4.3; docs/DESIGN.md 7).

import { clientOf } from '#lib/accounts/client.ts';
import { CASHIER_PAGE_HEADERS } from '#lib/billing/cashier.ts';
import type { PageResult } from '#lib/billing/mock-cashier.ts';
import { errors } from '#lib/core/errors.ts';
import { created, html, ok } from '#lib/http/envelope.ts';
import { statusOf } from '#lib/http/errors.ts';
import { createGroupHandler, defineRoute, type EntryOptions } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import {
  adminOrderView,
  cashierQuery,
  couponBody,
  couponPatch,
  couponQuoteView,
  couponView,
  gatewayList,
  orderBody,
  orderView,
  planBody,
  planList,
  planPatch,
  planView,
  refundBody,
  settingsPatchSchema,
  settingsView,
  validateBody,
} from '#lib/http/schemas/billing.ts';
import { deletedView, pageOf } from '#lib/http/schemas/common.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { pageQuery } from '#lib/platform/db/paging.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type PaymentsDeps, paymentsDeps } from './deps.ts';
import { needs } from './needs.ts';

const callerId = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

function cashierResult(page: PageResult): HttpResult {
  const result = html(page.html, page.refusal ? statusOf(page.refusal) : 200);
  return { ...result, headers: { ...result.headers, ...CASHIER_PAGE_HEADERS } };
}

/** The payments group over the given dependencies (tests build theirs with the same builders). */
export function createPaymentsHandler(deps: () => PaymentsDeps, options: EntryOptions = {}) {
  return createGroupHandler(
    'payments',
    {
      'GET /api/v1/plans': defineRoute({
        response: planList,
        run: async () => ok(await deps().plans.list(true)),
      }),
      'GET /api/v1/admin/plans': defineRoute({
        response: planList,
        run: async () => ok(await deps().plans.list(false)),
      }),
      'POST /api/v1/admin/plans': defineRoute({
        body: planBody,
        response: planView,
        successStatus: 201,
        run: async (request) => created(await deps().plans.create(request.body)),
      }),
      'PATCH /api/v1/admin/plans/{id}': defineRoute({
        body: planPatch,
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
        response: gatewayList,
        run: async () => ok(await deps().settings.listGateways()),
      }),

      'POST /api/v1/orders': defineRoute({
        body: orderBody,
        summary: 'Places an order for a plan; the price comes from the plan.',
        response: orderView,
        successStatus: 201,
        // 429: an order naming a coupon code spends a coupon check (docs/PAYMENTS-GUIDE.md "Coupons").
        errors: [429, 502],
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
          'What a coupon code takes off a plan for the caller now (without plan_id: off each plan on sale it can be used on, one check); any unusable code is 400 coupon: cannot be used; 429 past the per-account or per-address budget.',
        body: validateBody,
        response: couponQuoteView,
        errors: [429],
        run: async (request) => {
          const { plan_id: planId } = request.body;
          const quotes = await deps().orders.quoteCoupon(
            callerId(request),
            request.body.code,
            planId,
            request.sourceIp,
          );
          // Never empty: a code that takes nothing off any plan is the 400.
          const price = ({ amount_cents, discount_cents, final_cents }: (typeof quotes)[number]) => ({
            amount_cents,
            discount_cents,
            final_cents,
          });
          const code = quotes[0]!.code;
          return ok(
            planId
              ? { code, ...price(quotes[0]!) }
              : { code, plans: quotes.map((quote) => ({ plan_id: quote.plan_id, ...price(quote) })) },
          );
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
      audit: () => deps().audit,
      // Only through the CDN, which also names the payer's address channel_c's mapi.php is told.
      frontDoor: options.frontDoor,
      bans: options.bans,
    },
  );
}

export const handler = createPaymentsHandler(paymentsDeps, {
  frontDoor: groupFrontDoor('payments', needs, config),
  bans: groupBans('payments', needs, config),
});
