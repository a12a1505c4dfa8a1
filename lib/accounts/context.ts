// What every account flow needs, built once per container (or per test with its own clock and mailer) by
// buildAccountContext from what it uses.

import type { SessionService } from '../auth/sessions.ts';
import type { TokenSigner } from '../auth/tokens.ts';
import type { MasterKey } from '../crypto/master-key.ts';
import type { Table } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import { log } from '../log.ts';
import type { Mail, Mailer } from '../mail/mailer.ts';
import { isoWithOffset } from '../time.ts';
import { CodeStore } from './codes.ts';
import { type Account, AccountRepository, publicAccount } from './repository.ts';
import { sealedKey } from './sealed-key.ts';
import { type RateLimit, Throttle } from './throttle.ts';

export interface AccountLimits {
  /** Code sends (SPEC.md 8): per account for e-mail binding, per address for registration and reset. */
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
}

export const DEFAULT_LIMITS: AccountLimits = {
  codeSend: { perMinute: 1, burst: 2, perDay: 10 },
  ipPerMinute: 60,
  credentialChecks: { perMinute: 2, burst: 10, perDay: 100 },
  totpLogin: { perMinute: 2, burst: 10, perDay: 100 },
  challengeAttempts: 5,
  challengeTtlSeconds: 300,
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
  }

  now(): Date {
    return this.table.clock();
  }

  /** The per-source-IP limit of the unauthenticated endpoints (DESIGN.md 5). */
  async limitIp(sourceIp: string): Promise<void> {
    const perMinute = this.limits.ipPerMinute;
    if (perMinute <= 0) return;
    await this.throttle.consume(
      `ip#${sourceIp || 'unknown'}`,
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

  /** A session for the account, in the shape DESIGN.md 5 gives: `{token, token_type, expires_at, user}`. */
  async sessionFor(account: Account) {
    const issued = await this.sessions.issue(account);
    return { ...issued, user: publicAccount(account) };
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
