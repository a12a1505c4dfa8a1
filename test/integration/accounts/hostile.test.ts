// Hostile input, account routes (docs/SPEC.md 4.1, docs/DESIGN.md 10, both prefixes, and the back office): random, malformed,
// oversized and type-confused bodies, headers, query strings; no caller, a user and an administrator. No
// answer is a 5xx, every error is an envelope, and rejected requests change nothing (hostile-fuzz.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as accountsHandler } from '#functions/accounts/handler.ts';
import { handler as sharesHandler } from '#functions/shares/handler.ts';
import type { Account } from '#lib/accounts/model.ts';
import { type RouteSpec, routesOf } from '#lib/http/routes.ts';
import { createTestAccount, type TestAccount, testSessions } from '#test/support/accounts.ts';
import { lambdaContext } from '#test/support/events.ts';
import {
  type BatchStats,
  type CallerAuth,
  callerCases,
  eventFor,
  fieldsOf,
  fuzzRoute,
  NO_CREDENTIALS,
  SEED,
} from '#test/support/hostile-fuzz.ts';
import { provisionTestStack } from '#test/support/stack.ts';

// Field names of each body (lib/http/schemas/accounts.ts, docs/DESIGN.md 5).
const FIELDS: Record<string, readonly string[]> = {
  'POST /auth/register/code': ['email'],
  'POST /auth/register': ['username', 'email', 'code', 'password'],
  'POST /auth/login': ['username', 'password', 'device_token'],
  'POST /admin/auth/login': ['username', 'password', 'device_token'],
  'POST /auth/totp/verify': ['challenge_token', 'code'],
  'POST /auth/totp/setup': ['password'],
  'POST /auth/totp/recovery-codes': ['password'],
  'POST /auth/totp/enable': ['code'],
  'POST /auth/totp/disable': ['code', 'password'],
  'POST /auth/email/code': ['email'],
  'POST /auth/email/verify': ['email', 'code', 'password'],
  'POST /auth/email/unbind': ['password'],
  'POST /auth/password': ['current_password', 'new_password'],
  'POST /auth/password/reset/code': ['email'],
  'POST /auth/password/reset': ['email', 'code', 'token', 'new_password'],
  'POST /auth/logout': [],
  'GET /auth/sessions': [],
  'DELETE /auth/sessions/{id}': [],
  'POST /auth/sessions/revoke-others': [],
  // Query parameters of the GET routes (hostile-fuzz.ts uses the names for queries too).
  'GET /auth/security/events': ['limit', 'cursor'],
  'POST /api/v1/admin/accounts': ['username', 'email', 'password', 'current_password'],
  'GET /api/v1/admin/accounts': ['q', 'limit', 'cursor'],
  'PATCH /api/v1/admin/accounts/{id}': ['status'],
  'POST /api/v1/admin/accounts/{id}/totp/reset': [],
  // Share links (docs/DESIGN.md 16): the shares group's, fuzzed here too (they share the password guard).
  'POST /api/v1/shares': ['file_id', 'album_id', 'password', 'expires_at', 'max_views'],
  'GET /api/v1/shares': ['limit', 'cursor'],
  'POST /api/v1/shares/{id}/open': ['password'],
  'POST /s/{id}': ['password'],
};

const ROUTES = [...routesOf('accounts'), ...routesOf('shares')];
const handlerOf = (route: RouteSpec) => (route.group === 'shares' ? sharesHandler : accountsHandler);
const stats: BatchStats = { compared: [], skipped: [] };
let user: TestAccount;
let admin: TestAccount;

/** A session of the account; logout gets a fresh one each time, so the fuzz does not log itself out. */
function tokenOf(holder: () => TestAccount, fresh: boolean): CallerAuth {
  return {
    kind: 'token',
    token: async () =>
      fresh ? (await testSessions().issue(holder().account as Account)).token : holder().token,
  };
}

beforeAll(async () => {
  await provisionTestStack();
  [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  // Warm up: whatever the first request of a container creates once (bootstrap marker, keys) exists
  // before the first snapshot.
  for (const route of ROUTES) {
    await handlerOf(route)(
      eventFor(route, {
        params: {},
        query: '',
        headers: {},
        body: { bytes: Buffer.alloc(0) },
        sourceIp: '198.51.100.1',
      }),
      lambdaContext,
    );
  }
});

afterAll(() => {
  // Every batch from a caller without credentials to a route that needs them must have been compared.
  expect(
    stats.skipped.filter((line) => line.includes(' as none') && !/register|login|verify|reset/.test(line)),
  ).toEqual([]);
});

describe(`hostile input to every account route (seed ${SEED})`, () => {
  const cases = callerCases(ROUTES);
  it.each(cases)(
    '%s as %s: no 5xx, envelopes only, no state change when rejected',
    async (_key, caller, route) => {
      const logout = route.path.endsWith('/auth/logout');
      const auth: CallerAuth =
        caller === 'none' ? NO_CREDENTIALS : tokenOf(() => (caller === 'user' ? user : admin), logout);
      await fuzzRoute({
        route,
        caller,
        auth,
        fields: fieldsOf(route, FIELDS),
        handler: handlerOf(route),
        stats,
      });
    },
  );

  it('compared the state around most batches', () => {
    expect(stats.compared.length).toBeGreaterThan(cases.length / 2);
  });
});
