// Hostile input, payment routes (docs/SPEC.md 4.3, docs/DESIGN.md 7): plans, gateways, orders, confirmation paths,
// payment settings, the mock cashier and the channel callback route, for no caller, a user and an
// administrator. No 5xx, envelopes only (channel replies and cashier pages in their own formats), and
// rejected requests change nothing (hostile-fuzz.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as callbackHandler } from '#functions/payment-callback/handler.ts';
import { handler as paymentsHandler } from '#functions/payments/handler.ts';
import { routeKeyOf, routesOf } from '#lib/http/routes.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import {
  type BatchStats,
  bearerOf,
  callerCases,
  fieldsOf,
  fuzzRoute,
  SEED,
} from '#test/support/hostile-fuzz.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';

const PLAN = ['name', 'description', 'amount_cents', 'active'];
const PAGE = ['limit', 'cursor'];
const FIELDS: Record<string, readonly string[]> = {
  'POST /api/v1/admin/plans': PLAN,
  'PATCH /api/v1/admin/plans/{id}': PLAN,
  'POST /api/v1/orders': ['plan_id', 'provider'],
  'GET /api/v1/orders': PAGE,
  'GET /api/v1/admin/orders': PAGE,
  'PUT /api/v1/admin/payment': ['default_gateway', 'mock', 'channel_a', 'channel_b', 'channel_c'],
  'GET /pay/mock/{id}': ['token'],
  'POST /pay/mock/{id}': ['token'],
  'POST /api/v1/payments/{provider}/callback': [
    'sign',
    'out_trade_no',
    'money',
    'trade_status',
    'pid',
    'resource',
  ],
  'GET /api/v1/payments/{provider}/callback': [
    'sign',
    'out_trade_no',
    'money',
    'trade_status',
    'pid',
    'type',
  ],
};

// Settings last: an administrator's random but valid settings must not steer the other batches.
const ROUTES = [...routesOf('payments'), ...routesOf('payment-callback')].sort(
  (a, b) => Number(a.path.endsWith('/admin/payment')) - Number(b.path.endsWith('/admin/payment')),
);
const stats: BatchStats = { compared: [], skipped: [] };
let user: TestAccount;
let admin: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  // Something to find: a plan, a mock order and a manual order of the user's.
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Hostile month', amount_cents: 990 },
  });
  expect(plan.status).toBe(201);
  for (const provider of ['mock', 'manual']) {
    const order = await call('POST', '/api/v1/orders', {
      headers: user.headers,
      body: { plan_id: plan.json.data.id, provider },
    });
    expect(order.status).toBe(201);
  }
});

afterAll(() => {
  const protectedRoutes = new Set(
    ROUTES.filter((route) => route.auth === 'session' || route.auth === 'admin'),
  );
  const mustCompare = [...protectedRoutes].map((route) => `${routeKeyOf(route)} as none`);
  expect(stats.skipped.filter((line) => mustCompare.some((label) => line.startsWith(`${label}:`)))).toEqual(
    [],
  );
});

describe(`hostile input to every payment route (seed ${SEED})`, () => {
  const cases = callerCases(ROUTES);
  it.each(cases)(
    '%s as %s: no 5xx, envelopes only, no state change when rejected',
    async (_key, caller, route) => {
      const auth = bearerOf(caller, { user: () => user.token, admin: () => admin.token });
      const handler = route.group === 'payment-callback' ? callbackHandler : paymentsHandler;
      await fuzzRoute({ route, caller, auth, fields: fieldsOf(route, FIELDS), handler, stats });
    },
  );

  it('answers 404 for a plan id longer than any key (found by this fuzz: it was a 500)', async () => {
    const id = 'x'.repeat(2048);
    for (const method of ['PATCH', 'DELETE'] as const) {
      const answer = await call(method, `/api/v1/admin/plans/${id}`, {
        headers: admin.headers,
        ...(method === 'PATCH' ? { body: { name: 'renamed' } } : {}),
      });
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ code: 404, data: null });
    }
  });

  it('compared the state around most batches', () => {
    expect(stats.compared.length).toBeGreaterThan(cases.length / 2);
  });
});
