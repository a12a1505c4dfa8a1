// The caller a route acts for, once the authenticator has run.
import type { Principal } from '#lib/accounts/model.ts';
import { errors } from '#lib/core/errors.ts';
import type { HttpRequest } from './types.ts';

/** The caller of a route that took credentials; a route that reaches here without one is a 401. */
export function requirePrincipal(request: Pick<HttpRequest<unknown, unknown>, 'principal'>): Principal {
  if (!request.principal) throw errors.unauthorized();
  return request.principal;
}

/** The caller's account as authentication read it (session routes); none is a 401. */
export function requireAccount(request: Pick<HttpRequest<unknown, unknown>, 'principal'>) {
  const { account } = requirePrincipal(request);
  if (!account) throw errors.unauthorized();
  return account;
}

/** The caller as quotas see it: administrators have none; the static upload token has its own. */
export function quotaAccountOf(principal: Principal): {
  id: string;
  role: Principal['role'];
  quotaBytes?: number;
} {
  const { accountId, role, quotaBytes } = principal;
  return { id: accountId, role, ...(quotaBytes === undefined ? {} : { quotaBytes }) };
}
