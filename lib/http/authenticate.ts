// Establishes the caller for a route's auth kind (lib/http/routes.ts): sessions everywhere, and on `uploader`
// routes also API tokens and the static `upload.api_token` (docs/DESIGN.md 5), when the group passes them.
import { API_TOKEN_PREFIX } from '#lib/accounts/api-tokens.ts';
import type { SessionService } from '#lib/accounts/sessions.ts';
import { AppError, errors } from '#lib/core/errors.ts';
import { sameSecret } from '#lib/platform/crypto/same-secret.ts';
import type { Authenticator } from './handler.ts';
import { API_PREFIX } from './routes.ts';
import type { Principal } from './types.ts';

export interface AuthenticatorInput {
  sessions: Pick<SessionService, 'authenticate'>;
  /** API tokens (`ut_...`), accepted on uploader routes. */
  apiTokens?: { verify(token: string): Promise<Principal> };
  /** The static `upload.api_token` and the principal its uploads belong to. */
  staticToken?: { token: string; owner(): Promise<Principal> };
  /** `admin.require_second_factor` as in force (adminSecondFactorRequired). */
  requireAdminSecondFactor: boolean;
}

/**
 * What an administrator without a second factor may still do under `admin.require_second_factor`: see
 * their account and its security, set up TOTP or a passkey, and log out (docs/ACCOUNTS.md).
 */
export const SECOND_FACTOR_SETUP_ROUTES: ReadonlySet<string> = new Set(
  [
    'GET /auth/me',
    'GET /auth/security',
    'POST /auth/totp/setup',
    'POST /auth/totp/enable',
    'GET /auth/passkeys',
    'POST /auth/passkeys/register/options',
    'POST /auth/passkeys/register/verify',
    'POST /auth/logout',
  ].flatMap((key) => {
    const [method, path] = key.split(' ');
    return [key, `${method} ${API_PREFIX}${path}`];
  }),
);

/** An administrator's session or token without TOTP or a passkey, on a route that is not setting one up. */
function lacksSecondFactor(principal: Principal, routeKey: string): boolean {
  const { account } = principal;
  if (principal.role !== 'admin' || principal.via === 'static_token' || !account) return false;
  if (account.totp_enabled || (account.passkey_count ?? 0) > 0) return false;
  return !SECOND_FACTOR_SETUP_ROUTES.has(routeKey);
}

export function createAuthenticator(input: AuthenticatorInput): Authenticator {
  const { sessions, apiTokens, staticToken } = input;
  const checked = async (request: { routeKey: string }, principal: Promise<Principal>) => {
    const caller = await principal;
    if (input.requireAdminSecondFactor && lacksSecondFactor(caller, request.routeKey))
      throw new AppError(
        'forbidden',
        'Administrators must set up a second factor (TOTP or a passkey) first; until then only that is allowed',
        // The console reads it to open the security page (web/src/api/client.ts).
        { data: { second_factor_required: true } },
      );
    return caller;
  };
  return async (request, kind) => {
    if (kind === 'none' || kind === 'signed') return undefined;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw errors.unauthorized('Authentication required: send Authorization: Bearer <token>');

    if (kind === 'uploader') {
      if (staticToken && sameSecret(token, staticToken.token)) return staticToken.owner();
      if (apiTokens && token.startsWith(API_TOKEN_PREFIX)) return checked(request, apiTokens.verify(token));
    } else if (token.startsWith(API_TOKEN_PREFIX)) {
      // A credential of the wrong kind says so, rather than "Session is invalid or expired".
      throw errors.unauthorized(
        'This route takes a session (log in); API tokens are accepted on the upload and file routes only',
      );
    }
    const principal = await checked(request, sessions.authenticate(token));
    if (kind === 'admin' && principal.role !== 'admin') throw errors.forbidden('Administrators only');
    return principal;
  };
}
