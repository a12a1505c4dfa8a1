// Signed tokens (sessions, login challenges, signed links): HS256 with a key kept in the table, sealed by
// the master key, created once on first use. No signing secret lives in configuration.
import { randomBytes, webcrypto } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppError } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { sealedKey } from './sealed-key.ts';

/** The sealed key's name (lib/accounts/sealed-key.ts); proof of work derives its own key from it. */
export const TOKEN_SIGNING_KEY = 'token-signing-key';

export type TokenScope = 'session' | 'totp_challenge' | 'mock_cashier';

export interface TokenClaims {
  sub: string;
  scope: TokenScope;
  jti: string;
  exp: number;
  iat: number;
  [claim: string]: unknown;
}

/**
 * Why a token was refused, as the catalogue's error: 401 for a forged, malformed or expired token, 403
 * for a genuine token of another scope. Callers still read `reason` to word their own answer.
 */
export class TokenError extends AppError {
  constructor(readonly reason: 'invalid' | 'expired' | 'wrong_scope') {
    super(
      reason === 'wrong_scope' ? 'wrong_token_scope' : 'invalid_token',
      reason === 'wrong_scope' ? 'This token is not valid here' : 'Token is invalid or expired',
    );
    this.name = 'TokenError';
  }
}

// What jose checks an HS256 key against; the key is imported once for both uses.
const HS256 = { name: 'HMAC', hash: 'SHA-256' } as const;

export interface TokenSignerDeps {
  table: Table;
  masterKey: () => Promise<MasterKey>;
}

export class TokenSigner {
  // A CryptoKey, not the raw bytes: jose imports raw bytes into WebCrypto again on every sign and verify,
  // tens of microseconds per request.
  private key: Promise<webcrypto.CryptoKey> | undefined;
  private readonly keyBytes: () => Promise<Buffer>;

  constructor(deps: TokenSignerDeps) {
    this.keyBytes = sealedKey(deps.table, deps.masterKey, TOKEN_SIGNING_KEY);
  }

  private signingKey(): Promise<webcrypto.CryptoKey> {
    this.key ??= this.keyBytes()
      .then((bytes) => webcrypto.subtle.importKey('raw', bytes, HS256, false, ['sign', 'verify']))
      .catch((error: unknown) => {
        this.key = undefined;
        throw error;
      });
    return this.key;
  }

  async sign(
    claims: { sub: string; scope: TokenScope; jti?: string } & Record<string, unknown>,
    ttlSeconds: number,
    now: Date = new Date(),
  ): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const jti = claims.jti ?? randomBytes(16).toString('base64url');
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = new Date((issuedAt + ttlSeconds) * 1000);
    const token = await new SignJWT({ ...claims, jti })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .sign(await this.signingKey());
    return { token, jti, expiresAt };
  }

  /**
   * Verifies signature, expiry and scope. Only the token's own faults are TokenErrors: a signing key that
   * cannot be opened (master key, table) propagates as it is, a server failure, never "invalid token".
   */
  async verify(token: string, scope: TokenScope, now: Date = new Date()): Promise<TokenClaims> {
    const key = await this.signingKey();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: now }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new TokenError('expired');
      throw new TokenError('invalid');
    }
    if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string') throw new TokenError('invalid');
    if (payload.scope !== scope) throw new TokenError('wrong_scope');
    return payload as TokenClaims;
  }
}
