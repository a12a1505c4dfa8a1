// Lambda entry of the `auth` group: every account endpoint of SPEC.md 4.1, served at the listed paths and
// under /api/v1 (DESIGN.md 4), plus back-office creation of administrators. Thin: validate, call one
// account flow, shape the envelope.
import type { AccountContext } from '#lib/accounts/context.ts';
import { flows } from '#lib/accounts/flows.ts';
import { bootstrapAdministrator } from '#lib/accounts/registration.ts';
import { publicAccount } from '#lib/accounts/repository.ts';
import { schemas } from '#lib/accounts/schemas.ts';
import { securityState } from '#lib/accounts/totp.ts';
import { config } from '#lib/config/index.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { errors } from '#lib/http/errors.ts';
import { createGroupHandler, defineRoute, type RouteImpls } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/paging.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import { API_PREFIX } from '#lib/routes.ts';
import { type AuthDeps, authDeps } from './deps.ts';

function accountOf(request: HttpRequest<unknown, unknown>) {
  const { account } = requirePrincipal(request);
  if (!account) throw errors.unauthorized();
  return account;
}

export function authRoutes(ctx: () => AccountContext): RouteImpls {
  const accountRoutes: RouteImpls = {
    'POST /auth/register/code': defineRoute({
      body: schemas.emailOnly,
      run: async (req) => ok(await flows.sendRegistrationCode(ctx(), req.body, req.sourceIp)),
    }),
    'POST /auth/register': defineRoute({
      body: schemas.register,
      run: async (req) => created(await flows.register(ctx(), req.body, req.sourceIp)),
    }),
    'POST /auth/login': defineRoute({
      body: schemas.login,
      run: async (req) => ok(await flows.login(ctx(), 'user', req.body, req.sourceIp)),
    }),
    'POST /admin/auth/login': defineRoute({
      body: schemas.login,
      run: async (req) => ok(await flows.login(ctx(), 'admin', req.body, req.sourceIp)),
    }),
    'POST /auth/totp/verify': defineRoute({
      body: schemas.totpVerify,
      run: async (req) => ok(await flows.verifyChallenge(ctx(), req.body, req.sourceIp)),
    }),
    'GET /auth/me': defineRoute({ run: async (req) => ok(publicAccount(accountOf(req))) }),
    'GET /auth/security': defineRoute({ run: async (req) => ok(securityState(accountOf(req))) }),
    'POST /auth/totp/setup': defineRoute({
      body: schemas.empty,
      run: async (req) => ok(await flows.setupTotp(ctx(), accountOf(req))),
    }),
    'POST /auth/totp/enable': defineRoute({
      body: schemas.codeOnly,
      run: async (req) => ok(await flows.enableTotp(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/totp/disable': defineRoute({
      body: schemas.totpDisable,
      run: async (req) => ok(await flows.disableTotp(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/email/code': defineRoute({
      body: schemas.emailOnly,
      run: async (req) => ok(await flows.sendEmailCode(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/email/verify': defineRoute({
      body: schemas.emailVerify,
      run: async (req) => ok(await flows.verifyEmail(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/email/unbind': defineRoute({
      body: schemas.passwordOnly,
      run: async (req) => ok(await flows.unbindEmail(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/password': defineRoute({
      body: schemas.passwordChange,
      run: async (req) => ok(await flows.changePassword(ctx(), accountOf(req), req.body)),
    }),
    'POST /auth/password/reset/code': defineRoute({
      body: schemas.emailOnly,
      run: async (req) => ok(await flows.sendResetCode(ctx(), req.body, req.sourceIp)),
    }),
    'POST /auth/password/reset': defineRoute({
      body: schemas.passwordReset,
      run: async (req) => ok(await flows.resetPassword(ctx(), req.body, req.sourceIp)),
    }),
    'POST /auth/logout': defineRoute({
      body: schemas.empty,
      run: async (req) => {
        if (req.principal?.credentialId) await ctx().sessions.revoke(req.principal.credentialId);
        return ok(null);
      },
    }),
  };
  const routes: RouteImpls = {};
  for (const [key, impl] of Object.entries(accountRoutes)) {
    const [method, path] = key.split(' ') as [string, string];
    routes[key] = impl;
    routes[`${method} ${API_PREFIX}${path}`] = impl;
  }
  routes[`POST ${API_PREFIX}/admin/accounts`] = defineRoute({
    body: schemas.adminCreate,
    run: async (req) => created(await flows.createAdministrator(ctx(), req.body)),
  });
  return routes;
}

/** The auth group over the given dependencies (tests build theirs with their own clock and mailer). */
export function createAuthHandler(deps: () => AuthDeps, options: { trustedProxySecret?: string } = {}) {
  return createGroupHandler(
    'auth',
    authRoutes(() => deps().accounts),
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      // The per-IP limit needs the viewer's address, which behind CloudFront only the CDN can name.
      ...(options.trustedProxySecret ? { trustedProxySecret: options.trustedProxySecret } : {}),
      // Once per container, before the first request (race-safe across containers).
      warmUp: async () => {
        await bootstrapAdministrator(deps().accounts, deps().bootstrap);
      },
    },
  );
}

export const handler = createAuthHandler(authDeps, {
  trustedProxySecret: config.http.trusted_proxy_secret,
});
