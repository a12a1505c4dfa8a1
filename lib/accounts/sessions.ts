// Sessions: signed tokens backed by a session item, so one can be ended (logout, the session list) and all
// of an account's ended at once (its session epoch moves on password change or reset). Session items live
// in the account's own partition (`account#<id>` / `session#<jti>`): authentication reads the session and
// the account in one BatchGet, and the account's sessions are one strongly consistent query.

import { AppError, errors } from '#lib/core/errors.ts';
import { conditionFailedReturns, epochSeconds, type Item, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { Account, Principal } from './model.ts';
import { accountKey, fromAccountItem, publicAccount } from './repository.ts';
import { TokenError, type TokenSigner } from './tokens.ts';

/**
 * The check itself failed (the signing key could not be opened, a dependency is down): logged with its
 * cause and answered 5xx (docs/DESIGN.md 9), never a 401 that would send a valid caller to log in again.
 */
function credentialCheckFailed(cause: unknown): unknown {
  // Throttling and unreachable AWS services keep their own shape: the handler answers them 503.
  if ((cause as { $metadata?: unknown; code?: string })?.$metadata !== undefined) return cause;
  if (cause instanceof AppError) return cause;
  return errors.serviceUnavailable('Credentials cannot be checked right now; try again shortly', cause);
}

export const SESSION_PREFIX = 'session#';
export const sessionKey = (accountId: string, jti: string) => ({
  pk: `account#${accountId}`,
  sk: `${SESSION_PREFIX}${jti}`,
});
/** Session ids are token ids (jti): 16 random bytes, base64url. Anything else is nobody's session. */
export const SESSION_ID = /^[A-Za-z0-9_-]{16,64}$/;

export interface IssuedSession {
  token: string;
  token_type: 'Bearer';
  expires_at: string;
}

export interface SessionItem extends Item {
  pk: string;
  sk: string;
  account_id: string;
  /** The account's session epoch when issued: a session of an older epoch is dead. */
  sep: number;
  created_at: string;
  expires_at: number;
  ip?: string;
  user_agent?: string;
}

export interface SessionView {
  id: string;
  current: boolean;
  created_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

/** A new session in the shape docs/DESIGN.md 5 gives: `{token, token_type, expires_at, user}`. */
export async function sessionAnswer(sessions: SessionService, account: Account, client: ClientInfo) {
  const issued = await sessions.issue(account, client);
  return { ...issued, user: publicAccount(account) };
}

export interface SessionServiceDeps {
  table: Table;
  signer: TokenSigner;
  /** `auth.session_ttl_hours`. */
  ttlHours: number;
}

export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  async issue(account: Account, client?: ClientInfo): Promise<IssuedSession> {
    const { issued, item } = await this.prepare(account, client);
    await this.deps.table.putNew(item);
    return issued;
  }

  /**
   * A signed session and the item that makes it live, for a caller that writes the item together with
   * other writes (login). The token is valid only once the item is written. Its key is the token's random
   * id (16 bytes), so a plain put never replaces another session.
   */
  async prepare(
    account: Account,
    client?: ClientInfo,
  ): Promise<{ issued: IssuedSession; item: SessionItem }> {
    const now = this.deps.table.clock();
    const ttlSeconds = this.deps.ttlHours * 3600;
    const signed = await this.deps.signer.sign(
      { sub: account.id, scope: 'session', sep: account.session_epoch },
      ttlSeconds,
      now,
    );
    const item: SessionItem = {
      ...sessionKey(account.id, signed.jti),
      account_id: account.id,
      sep: account.session_epoch,
      created_at: now.toISOString(),
      expires_at: epochSeconds(signed.expiresAt),
      ...(client?.ip ? { ip: client.ip } : {}),
      ...(client?.userAgent ? { user_agent: client.userAgent } : {}),
    };
    return {
      issued: { token: signed.token, token_type: 'Bearer', expires_at: isoWithOffset(signed.expiresAt) },
      item,
    };
  }

  /**
   * The caller behind a session token: signature, expiry and scope, then the session and the account in
   * one read. A challenge token (another scope) is 403; anything else that fails is 401. Nothing is
   * cached: a disabled account or an ended session is refused on its next request.
   */
  async authenticate(token: string): Promise<Principal> {
    let claims: Awaited<ReturnType<TokenSigner['verify']>>;
    try {
      claims = await this.deps.signer.verify(token, 'session', this.deps.table.clock());
    } catch (error) {
      // Checked first: a TokenError is an AppError too, but only it means the caller's token is at fault.
      if (!(error instanceof TokenError)) throw credentialCheckFailed(error);
      if (error.reason === 'wrong_scope') throw errors.forbidden('This token is not a session');
      throw errors.unauthorized('Session is invalid or expired');
    }
    const [session, accountItem] = await this.deps.table.getMany<Item>([
      sessionKey(claims.sub, claims.jti),
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

  /**
   * Ends one live session of the account; false when there was none by that id (unknown, another
   * account's, expired, of an older epoch, or already ended by a concurrent request).
   */
  async revoke(account: Pick<Account, 'id' | 'session_epoch'>, jti: string): Promise<boolean> {
    if (!SESSION_ID.test(jti)) return false;
    return this.deps.table
      .delete(sessionKey(account.id, jti), {
        ConditionExpression: 'attribute_exists(pk) AND sep = :sep AND expires_at > :now',
        ExpressionAttributeValues: {
          ':sep': account.session_epoch,
          ':now': epochSeconds(this.deps.table.clock()),
        },
      })
      .then(() => true, conditionFailedReturns(false));
  }

  /** The account's live sessions (current epoch, unexpired), newest first. */
  async list(account: Pick<Account, 'id' | 'session_epoch'>, currentJti?: string): Promise<SessionView[]> {
    const items: SessionItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.table.query<SessionItem>({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `account#${account.id}`, ':prefix': SESSION_PREFIX },
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      items.push(...page.items.filter((item) => item.sep === account.session_epoch));
      start = page.lastKey;
    } while (start);
    return items
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .map((item) => {
        const id = item.sk.slice(SESSION_PREFIX.length);
        return {
          id,
          current: id === currentJti,
          created_at: isoWithOffset(new Date(item.created_at)),
          expires_at: isoWithOffset(new Date(item.expires_at * 1000)),
          ip: item.ip ?? null,
          user_agent: item.user_agent ?? null,
        };
      });
  }
}
