import { describe, expect, it } from 'vitest';
import { createGroupHandler, defineRoute, noCredentials } from '#lib/http/handler.ts';
import { API_PREFIX, FUNCTION_GROUPS, matchRoute, ROUTES, routeKeyOf, routesOf } from '#lib/http/routes.ts';
import { loadGroupRoutes } from '../../scripts/openapi-document.ts';

describe('route table', () => {
  it('has no duplicate method + path', () => {
    const keys = ROUTES.map(routeKeyOf);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('serves every account route both bare and under /api/v1 from the accounts group', () => {
    const bare = ROUTES.filter(
      (route) => route.path.startsWith('/auth/') || route.path === '/admin/auth/login',
    );
    expect(bare.length).toBeGreaterThanOrEqual(17);
    for (const route of bare) {
      const prefixed = ROUTES.find(
        (other) => routeKeyOf(other) === `${route.method} ${API_PREFIX}${route.path}`,
      );
      expect(prefixed, `${route.method} ${API_PREFIX}${route.path}`).toMatchObject({
        group: 'accounts',
        auth: route.auth,
      });
      expect(route.group).toBe('accounts');
    }
  });

  it('gives every function group at least one route', () => {
    for (const group of FUNCTION_GROUPS) expect(ROUTES.some((route) => route.group === group)).toBe(true);
  });

  it('keeps the docs/SPEC.md paths exactly', () => {
    const keys = new Set(ROUTES.map(routeKeyOf));
    for (const key of [
      'POST /auth/register/code',
      'POST /admin/auth/login',
      'POST /auth/totp/verify',
      'POST /api/v1/upload',
      'POST /api/v1/upload/presign',
      'POST /api/v1/upload/confirm',
      'GET /api/v1/payment-gateways',
      'POST /api/v1/payments/{provider}/callback',
      'POST /api/v1/admin/orders/{id}/pay',
      'GET /api/v1/admin/payment',
      'PUT /api/v1/admin/payment',
    ]) {
      expect(keys.has(key), key).toBe(true);
    }
  });

  it('matches path parameters, greedy keys, and prefers literal routes', () => {
    expect(matchRoute('GET', '/i/2026/11/21/a.png')).toMatchObject({
      route: { path: '/i/{key+}' },
      params: { key: '2026/11/21/a.png' },
    });
    expect(matchRoute('POST', '/api/v1/orders/abc/pay')).toMatchObject({
      route: { path: '/api/v1/orders/{id}/pay', group: 'payments' },
      params: { id: 'abc' },
    });
    expect(matchRoute('POST', '/api/v1/upload/presign')?.route.path).toBe('/api/v1/upload/presign');
    expect(matchRoute('DELETE', '/auth/login')).toBeUndefined();
    expect(matchRoute('GET', '/api/v1/files/a/b')).toBeUndefined();
  });
});

describe("each group's handler against the route table", () => {
  it('implements every route of its group and nothing else', async () => {
    const groups = await loadGroupRoutes();
    for (const group of FUNCTION_GROUPS) {
      const implemented = Object.keys(groups[group]).sort();
      // An alias (an account route under /api/v1) is served by its route's implementation.
      const own = routesOf(group).filter((route) => !route.aliasOf);
      expect(implemented, group).toEqual(own.map(routeKeyOf).sort());
    }
  });

  it('does not compile with a route left out or a key that names no route of the group', () => {
    const route = defineRoute({ run: async () => ({ kind: 'raw', status: 204, body: '', headers: {} }) });
    const options = { authenticate: noCredentials };
    // Held by tsc (`npm run check`): an @ts-expect-error that no longer errs fails the type check.
    const build = () => [
      // @ts-expect-error a route of the render group is left out
      createGroupHandler('render', {}, options),
      // @ts-expect-error a misspelt key: no such route in the render group
      createGroupHandler('render', { 'GET /i/{key+}': route, 'GET /i/{key}': route }, options),
      createGroupHandler('render', { 'GET /i/{key+}': route }, options),
    ];
    expect(build).toBeTypeOf('function');
  });
});
