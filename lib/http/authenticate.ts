// Establishes the caller for a route's auth kind (lib/http/routes.ts): sessions everywhere, and on `uploader`
// routes also API tokens and the static `upload.api_token` (docs/DESIGN.md 5), when the group passes them.
import { API_TOKEN_PREFIX } from '#lib/accounts/api-tokens.ts';
import type { SessionService } from '#lib/accounts/sessions.ts';
import { errors } from '#lib/core/errors.ts';
import { sameSecret } from '#lib/platform/crypto/same-secret.ts';
import type { Authenticator } from './handler.ts';
import type { Principal } from './types.ts';

export interface AuthenticatorInput {
  sessions: Pick<SessionService, 'authenticate'>;
  /** API tokens (`ut_...`), accepted on uploader routes. */
  apiTokens?: { verify(token: string): Promise<Principal> };
  /** The static `upload.api_token` and the principal its uploads belong to. */
  staticToken?: { token: string; owner(): Promise<Principal> };
}

export function createAuthenticator(input: AuthenticatorInput): Authenticator {
  const { sessions, apiTokens, staticToken } = input;
  return async (request, kind) => {
    if (kind === 'none' || kind === 'signed') return undefined;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw errors.unauthorized('Authentication required: send Authorization: Bearer <token>');

    if (kind === 'uploader') {
      if (staticToken && sameSecret(token, staticToken.token)) return staticToken.owner();
      if (apiTokens && token.startsWith(API_TOKEN_PREFIX)) return apiTokens.verify(token);
    } else if (token.startsWith(API_TOKEN_PREFIX)) {
      // A credential of the wrong kind says so, rather than "Session is invalid or expired".
      throw errors.unauthorized(
        'This route takes a session (log in); API tokens are accepted on the upload and file routes only',
      );
    }
    const principal = await sessions.authenticate(token);
    if (kind === 'admin' && principal.role !== 'admin') throw errors.forbidden('Administrators only');
    return principal;
  };
}
