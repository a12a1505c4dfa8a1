// Establishes the caller for a route's auth kind (lib/routes.ts): sessions everywhere, and for upload
// routes also API tokens and the static `upload.api_token`.
import { timingSafeEqual } from 'node:crypto';
import { config } from '../config/index.ts';
import { errors } from '../http/errors.ts';
import type { Authenticator } from '../http/handler.ts';
import type { HttpRequest, Principal } from '../http/types.ts';
import { sessionService } from './index.ts';
import type { SessionService } from './sessions.ts';

export function bearerToken(request: Pick<HttpRequest, 'headers'>): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** API tokens are told apart from session tokens by their prefix (sessions are JWTs). */
export const API_TOKEN_PREFIX = 'ut_';

export type ApiTokenVerifier = (token: string) => Promise<Principal>;
let apiTokenVerifier: ApiTokenVerifier | undefined;
let staticTokenOwner: (() => Promise<Principal>) | undefined;

/** Upload code plugs in API-token checking and the owner of the static token (DESIGN.md 5). */
export function useUploaderCredentials(options: {
  verifyApiToken: ApiTokenVerifier;
  staticTokenPrincipal: () => Promise<Principal>;
}): void {
  apiTokenVerifier = options.verifyApiToken;
  staticTokenOwner = options.staticTokenPrincipal;
}

function isStaticToken(token: string): boolean {
  const expected = config.upload.api_token;
  if (!expected) return false;
  const a = Buffer.from(token);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * An authenticator over a session service: the service's own in production (`authenticate`), one with
 * another clock or table in tests.
 */
export function createAuthenticator(sessions: () => SessionService): Authenticator {
  return async (request, kind) => {
    if (kind === 'none' || kind === 'signed') return undefined;
    const token = bearerToken(request);
    if (!token) throw errors.unauthorized('Authentication required: send Authorization: Bearer <token>');

    if (kind === 'uploader') {
      if (isStaticToken(token) && staticTokenOwner) return staticTokenOwner();
      if (token.startsWith(API_TOKEN_PREFIX) && apiTokenVerifier) return apiTokenVerifier(token);
    }
    const principal = await sessions().authenticate(token);
    if (kind === 'admin' && principal.role !== 'admin') throw errors.forbidden('Administrators only');
    return principal;
  };
}

export const authenticate: Authenticator = createAuthenticator(sessionService);
