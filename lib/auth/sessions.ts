// Sessions: signed tokens backed by a session item, so one can be ended (logout) and all of an account's
// ended at once (its session epoch moves on password change or reset).
import { type Account, AccountRepository, accountKey, fromAccountItem } from '../accounts/repository.ts';
import { epochSeconds, type Item, type Table } from '../db/repository.ts';
import { AppError, errors } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import { isoWithOffset } from '../time.ts';
import { TokenError, type TokenSigner } from './tokens.ts';

/**
 * The check itself failed (the signing key could not be opened, a dependency is down): logged with its
 * cause and answered 5xx (DESIGN.md 9), never a 401 that would send a valid caller to log in again.
 */
function credentialCheckFailed(cause: unknown): unknown {
  // Throttling and unreachable AWS services keep their own shape: the handler answers them 503.
  if ((cause as { $metadata?: unknown; code?: string })?.$metadata !== undefined) return cause;
  if (cause instanceof AppError) return cause;
  return errors.serviceUnavailable('Credentials cannot be checked right now; try again shortly', cause);
}

export const sessionKey = (jti: string) => ({ pk: `session#${jti}`, sk: 'session' });

export interface IssuedSession {
  token: string;
  token_type: 'Bearer';
  expires_at: string;
}

export class SessionService {
  readonly accounts: AccountRepository;

  constructor(
    private readonly table: Table,
    private readonly signer: TokenSigner,
    private readonly ttlHours: number,
  ) {
    this.accounts = new AccountRepository(table);
  }

  async issue(account: Account): Promise<IssuedSession> {
    const now = this.table.clock();
    const ttlSeconds = this.ttlHours * 3600;
    const signed = await this.signer.sign(
      { sub: account.id, scope: 'session', sep: account.session_epoch },
      ttlSeconds,
      now,
    );
    await this.table.putNew({
      ...sessionKey(signed.jti),
      account_id: account.id,
      created_at: now.toISOString(),
      expires_at: epochSeconds(signed.expiresAt),
    });
    return { token: signed.token, token_type: 'Bearer', expires_at: isoWithOffset(signed.expiresAt) };
  }

  /**
   * The caller behind a session token: signature, expiry and scope, then the session and the account in
   * one read. A challenge token (another scope) is 403; anything else that fails is 401.
   */
  async authenticate(token: string): Promise<Principal> {
    let claims: Awaited<ReturnType<TokenSigner['verify']>>;
    try {
      claims = await this.signer.verify(token, 'session', this.table.clock());
    } catch (error) {
      // Checked first: a TokenError is an AppError too, but only it means the caller's token is at fault.
      if (!(error instanceof TokenError)) throw credentialCheckFailed(error);
      if (error.reason === 'wrong_scope') throw errors.forbidden('This token is not a session');
      throw errors.unauthorized('Session is invalid or expired');
    }
    const [session, accountItem] = await this.table.getMany<Item>([
      sessionKey(claims.jti),
      accountKey(claims.sub),
    ]);
    const account = fromAccountItem(accountItem);
    if (
      !session ||
      session.account_id !== claims.sub ||
      !account ||
      account.status !== 'active' ||
      account.session_epoch !== claims.sep
    ) {
      throw errors.unauthorized('Session is invalid or expired');
    }
    return { accountId: account.id, role: account.role, via: 'session', credentialId: claims.jti, account };
  }

  async revoke(jti: string): Promise<void> {
    await this.table.delete(sessionKey(jti));
  }
}
