// The limits every account flow shares: per source address on the unauthenticated endpoints, and per
// account on password and TOTP checks made with a session (re-authentication among them), so neither a
// botnet nor a stolen session can guess freely.
import { errors } from '#lib/core/errors.ts';
import { addressBucket } from './client.ts';
import type { AccountLimits } from './limits.ts';
import type { Account } from './model.ts';
import { verifyPassword } from './passwords.ts';
import type { Throttle } from './throttle.ts';

export interface RequestLimitsDeps {
  throttle: Throttle;
  limits: Pick<AccountLimits, 'ipPerMinute' | 'credentialChecks'>;
}

export class RequestLimits {
  constructor(private readonly deps: RequestLimitsDeps) {}

  /**
   * The per-source-address limit of the unauthenticated endpoints (docs/DESIGN.md 5); IPv6 clients count by
   * their /64 (client.ts).
   */
  async limitIp(sourceIp: string): Promise<void> {
    const perMinute = this.deps.limits.ipPerMinute;
    if (perMinute <= 0) return;
    await this.deps.throttle.consume(
      `ip#${addressBucket(sourceIp)}`,
      { perMinute, burst: perMinute },
      'Too many requests from this address',
    );
  }

  async limitCredentialChecks(accountId: string): Promise<void> {
    await this.deps.throttle.consume(
      `credential#${accountId}`,
      this.deps.limits.credentialChecks,
      'Too many attempts; try again later',
    );
  }

  /** Re-authentication (docs/ACCOUNTS.md): the current password, throttled per account like every check. */
  async requirePassword(
    account: Account,
    password: string,
    field: 'password' | 'current_password' = 'password',
  ): Promise<void> {
    await this.limitCredentialChecks(account.id);
    if (!(await verifyPassword(account.password_hash, password))) {
      throw errors.badRequest(`${field}: is incorrect`);
    }
  }
}
