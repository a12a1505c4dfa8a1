// What every account flow needs, built once per container (or per test with its own clock and mailer) by
// buildAccountContext from what it uses.

import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mail, Mailer } from '#lib/platform/mail/mailer.ts';
import { type SecurityNoticeKind, securityNoticeMail } from '#lib/platform/mail/templates.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { ApiTokenService } from './api-tokens.ts';
import { addressBucket, type ClientInfo } from './client.ts';
import { CodeStore } from './codes.ts';
import { DecoyAccount } from './decoy.ts';
import { DEFAULT_PASSWORD_GUESS_LIMIT, LoginGuard, type PasswordGuessLimit } from './login-guard.ts';
import { verifyPassword } from './passwords.ts';
import { RecoveryCodeHasher } from './recovery-codes.ts';
import { type Account, AccountRepository, publicAccount } from './repository.ts';
import { sealedKey } from './sealed-key.ts';
import { SecondFactorWrites } from './second-factor-writes.ts';
import { SecurityEvents, type SecurityEventType } from './security-events.ts';
import type { SessionService } from './sessions.ts';
import { type RateLimit, Throttle } from './throttle.ts';
import type { TokenSigner } from './tokens.ts';

/** Storage use per account, shown in the back-office listing (filled by the usage repository). */
export interface AccountUsage {
  used_bytes: number;
  file_count: number;
  /** null: no quota (administrators). */
  quota_bytes: number | null;
}

/**
 * Where the back office reads each listed account's storage use from (lib/files `usageReader`); the role
 * says whether a quota applies (administrators have none).
 */
export interface AccountUsageReader {
  usageOf(
    accounts: ReadonlyArray<{ id: string; role: 'user' | 'admin' }>,
  ): Promise<Map<string, AccountUsage>>;
}

export interface AccountLimits {
  /** Code sends (docs/SPEC.md 8): per account for e-mail binding, per address for registration and reset. */
  codeSend: RateLimit;
  /** Requests per minute per source IP on the unauthenticated account endpoints; 0 turns it off. */
  ipPerMinute: number;
  /** Password and TOTP checks on authenticated endpoints, per account (guessing with a stolen session). */
  credentialChecks: RateLimit;
  /** TOTP codes tried at /auth/totp/verify, per account, over all of its challenges. */
  totpLogin: RateLimit;
  /** Wrong codes one login challenge takes before it is dead. */
  challengeAttempts: number;
  /** Lifetime of a login challenge, in seconds. */
  challengeTtlSeconds: number;
  /** Consecutive failed passwords per account before logins to it back off (docs/ACCOUNTS.md). */
  passwordGuessing: PasswordGuessLimit;
  /**
   * /auth/password/reset/code answers no sooner than this after it arrives, whatever the address, so the
   * mail sent for a real account (an SES round trip) does not show in the response time.
   */
  resetCodeMinMs: number;
}

export const DEFAULT_LIMITS: AccountLimits = {
  codeSend: { perMinute: 1, burst: 2, perDay: 10 },
  ipPerMinute: 60,
  credentialChecks: { perMinute: 2, burst: 10, perDay: 100 },
  totpLogin: { perMinute: 2, burst: 10, perDay: 100 },
  challengeAttempts: 5,
  challengeTtlSeconds: 300,
  passwordGuessing: DEFAULT_PASSWORD_GUESS_LIMIT,
  resetCodeMinMs: 300,
};

export interface AccountDeps {
  table: Table;
  mailer: Mailer;
  masterKey: () => Promise<MasterKey>;
  sessions: SessionService;
  signer: TokenSigner;
  limits?: Partial<AccountLimits>;
  /** Shown by authenticator apps next to the account name. */
  totpIssuer?: string;
  /** Storage use for the back-office listing; without it listings answer `usage: null`. */
  usage?: AccountUsageReader;
}

export class AccountContext {
  readonly table: Table;
  readonly accounts: AccountRepository;
  readonly codes: CodeStore;
  readonly throttle: Throttle;
  readonly mailer: Mailer;
  readonly masterKey: () => Promise<MasterKey>;
  readonly sessions: SessionService;
  readonly signer: TokenSigner;
  readonly limits: AccountLimits;
  readonly totpIssuer: string;
  readonly secondFactor: SecondFactorWrites;
  readonly events: SecurityEvents;
  readonly loginGuard: LoginGuard;
  readonly recoveryCodes: RecoveryCodeHasher;
  readonly apiTokens: ApiTokenService;
  readonly usage: AccountUsageReader | undefined;
  readonly decoy: DecoyAccount;

  constructor(deps: AccountDeps) {
    this.table = deps.table;
    this.accounts = new AccountRepository(deps.table);
    this.codes = new CodeStore(deps.table, sealedKey(deps.table, deps.masterKey, 'code-pepper'));
    this.throttle = new Throttle(deps.table);
    this.mailer = deps.mailer;
    this.masterKey = deps.masterKey;
    this.sessions = deps.sessions;
    this.signer = deps.signer;
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
    this.totpIssuer = deps.totpIssuer ?? 'Account Service';
    this.secondFactor = new SecondFactorWrites(deps.table);
    this.events = new SecurityEvents(deps.table);
    this.loginGuard = new LoginGuard(deps.table, this.limits.passwordGuessing);
    this.recoveryCodes = new RecoveryCodeHasher(
      sealedKey(deps.table, deps.masterKey, 'recovery-code-pepper'),
    );
    this.apiTokens = new ApiTokenService(deps.table);
    this.usage = deps.usage;
    this.decoy = new DecoyAccount(deps.table);
  }

  now(): Date {
    return this.table.clock();
  }

  /**
   * The per-source-address limit of the unauthenticated endpoints (docs/DESIGN.md 5); IPv6 clients count by
   * their /64 (client.ts).
   */
  async limitIp(sourceIp: string): Promise<void> {
    const perMinute = this.limits.ipPerMinute;
    if (perMinute <= 0) return;
    await this.throttle.consume(
      `ip#${addressBucket(sourceIp)}`,
      { perMinute, burst: perMinute },
      'Too many requests from this address',
    );
  }

  async limitCredentialChecks(accountId: string): Promise<void> {
    await this.throttle.consume(
      `credential#${accountId}`,
      this.limits.credentialChecks,
      'Too many attempts; try again later',
    );
  }

  /** A session for the account, in the shape docs/DESIGN.md 5 gives: `{token, token_type, expires_at, user}`. */
  async sessionFor(account: Account, client: ClientInfo) {
    const issued = await this.sessions.issue(account, client);
    return { ...issued, user: publicAccount(account) };
  }

  /**
   * After a security change: its event, and when it has one its notice mail to the account's verified
   * address, naming the time and source address. Neither can undo the change, so neither throws.
   */
  async securityChange(
    account: Account,
    type: SecurityEventType,
    client: ClientInfo,
    notice?: { kind: SecurityNoticeKind; newEmail?: string; remaining?: number; to?: string },
  ): Promise<void> {
    const to = notice?.to ?? (account.email_verified ? account.email : null);
    await Promise.all([
      this.events.record(account.id, type, client),
      notice && to
        ? this.sendNotice(
            securityNoticeMail(notice.kind, to, {
              username: account.username,
              at: this.now(),
              ip: client.ip,
              ...(notice.newEmail ? { newEmail: notice.newEmail } : {}),
              ...(notice.remaining === undefined ? {} : { remaining: notice.remaining }),
            }),
          )
        : undefined,
    ]);
  }

  /** Mail whose failure must not undo what already happened (a change notice): logged, not thrown. */
  async sendNotice(mail: Mail): Promise<void> {
    try {
      await this.mailer.send(mail);
    } catch (error) {
      log.warn('notice mail not sent', { subject: mail.subject, error_name: (error as Error)?.name });
    }
  }

  expiresIn(seconds: number): string {
    return isoWithOffset(new Date(this.now().getTime() + seconds * 1000));
  }
}

/** The account flows' context from what they use; production and tests call the same. */
export function buildAccountContext(deps: AccountDeps): AccountContext {
  return new AccountContext(deps);
}

export const sameAddress = (a: string | null | undefined, b: string | null | undefined) =>
  !!a && !!b && a.trim().toLowerCase() === b.trim().toLowerCase();

export const accountChanged = () => errors.conflict('The account was changed by another request; try again');

/** Re-authentication (docs/ACCOUNTS.md): the current password, throttled per account like every check. */
export async function requirePassword(
  ctx: AccountContext,
  account: Account,
  password: string,
  field: 'password' | 'current_password' = 'password',
): Promise<void> {
  await ctx.limitCredentialChecks(account.id);
  if (!(await verifyPassword(account.password_hash, password))) {
    throw errors.badRequest(`${field}: is incorrect`);
  }
}
