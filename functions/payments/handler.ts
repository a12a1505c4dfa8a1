// Lambda entry of the `payments` group: plans, gateways, orders, confirmation paths, payment settings and
// the hosted mock cashier (SPEC.md 2.4, 2.5, 4.3; DESIGN.md 7).

import * as z from 'zod';
import { config } from '#lib/config/index.ts';
import { PROVIDERS } from '#lib/config/schema.ts';
import { created, html, ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import { pageQuery, requirePrincipal } from '#lib/http/paging.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { CASHIER_PAGE_HEADERS } from '#lib/payments/cashier.ts';
import type { PageResult } from '#lib/payments/service.ts';
import { settingsPatchSchema } from '#lib/payments/settings.ts';
import { type PaymentsDeps, paymentsDeps } from './deps.ts';

const MAX_AMOUNT_CENTS = 100_000_000_00; // 100 million yuan, the largest amount the channels accept

const planBody = z.object({
  name: z.string().trim().min(1).max(100),
  description: z.string().trim().max(1000).optional(),
  amount_cents: z.number().int().min(1).max(MAX_AMOUNT_CENTS),
  active: z.boolean().optional(),
});
const planPatch = planBody.partial();

const orderBody = z.object({
  plan_id: z.string().trim().min(1).max(64),
  provider: z.enum(PROVIDERS).optional(),
});

const cashierQuery = z.object({ token: z.string().max(4096).optional() });

const callerId = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

function cashierResult(page: PageResult): HttpResult {
  const result = html(page.html, page.status);
  return { ...result, headers: { ...result.headers, ...CASHIER_PAGE_HEADERS } };
}

/** The payments group over the given dependencies (tests build theirs with the same builders). */
export function createPaymentsHandler(
  deps: () => PaymentsDeps,
  options: { trustedProxySecret?: string } = {},
) {
  const paymentService = () => deps().payments;
  return createGroupHandler(
    'payments',
    {
      'GET /api/v1/plans': defineRoute({ run: async () => ok(await paymentService().listPlans(true)) }),
      'GET /api/v1/admin/plans': defineRoute({
        run: async () => ok(await paymentService().listPlans(false)),
      }),
      'POST /api/v1/admin/plans': defineRoute({
        body: planBody,
        run: async (request) => created(await paymentService().createPlan(request.body)),
      }),
      'PATCH /api/v1/admin/plans/{id}': defineRoute({
        body: planPatch,
        run: async (request) => ok(await paymentService().updatePlan(request.params.id!, request.body)),
      }),
      'DELETE /api/v1/admin/plans/{id}': defineRoute({
        run: async (request) => ok(await paymentService().deletePlan(request.params.id!)),
      }),

      'GET /api/v1/payment-gateways': defineRoute({
        run: async () => ok(await paymentService().listGateways()),
      }),

      'POST /api/v1/orders': defineRoute({
        body: orderBody,
        run: async (request) =>
          created(await paymentService().createOrder(callerId(request), request.body, request.sourceIp)),
      }),
      'GET /api/v1/orders': defineRoute({
        query: pageQuery,
        run: async (request) =>
          ok(
            await paymentService().listOwnOrders(
              callerId(request),
              request.query.limit,
              request.query.cursor,
            ),
          ),
      }),
      'GET /api/v1/orders/{id}': defineRoute({
        run: async (request) => ok(await paymentService().getOwnOrder(callerId(request), request.params.id!)),
      }),
      'POST /api/v1/orders/{id}/cancel': defineRoute({
        run: async (request) =>
          ok(await paymentService().cancelOwnOrder(callerId(request), request.params.id!)),
      }),
      'POST /api/v1/orders/{id}/pay': defineRoute({
        run: async (request) =>
          ok(await paymentService().payOwnMockOrder(callerId(request), request.params.id!)),
      }),

      'GET /api/v1/admin/orders': defineRoute({
        query: pageQuery,
        run: async (request) =>
          ok(await paymentService().listAllOrders(request.query.limit, request.query.cursor)),
      }),
      'POST /api/v1/admin/orders/{id}/pay': defineRoute({
        run: async (request) => ok(await paymentService().writeOffManualOrder(request.params.id!)),
      }),

      'GET /api/v1/admin/payment': defineRoute({
        run: async () => ok(await paymentService().readSettings()),
      }),
      'PUT /api/v1/admin/payment': defineRoute({
        body: settingsPatchSchema,
        run: async (request) => ok(await paymentService().updateSettings(request.body)),
      }),

      'GET /pay/mock/{id}': defineRoute({
        query: cashierQuery,
        run: async (request) =>
          cashierResult(await paymentService().openCashier(request.params.id!, request.query.token)),
      }),
      'POST /pay/mock/{id}': defineRoute({
        query: cashierQuery,
        maxBodyBytes: 4096,
        run: async (request) =>
          cashierResult(await paymentService().payAtCashier(request.params.id!, request.query.token)),
      }),
    },
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      // channel_c's mapi.php is told the payer's address, which behind CloudFront only the CDN can name.
      ...(options.trustedProxySecret ? { trustedProxySecret: options.trustedProxySecret } : {}),
    },
  );
}

export const handler = createPaymentsHandler(paymentsDeps, {
  trustedProxySecret: config.http.trusted_proxy_secret,
});
