// The account domain's rate limits and timings (docs/SPEC.md 8, docs/DESIGN.md 5, 10), with their defaults.
import { DEFAULT_PASSWORD_GUESS_LIMIT, type PasswordGuessLimit } from './login-guard.ts';
import type { RateLimit } from './throttle.ts';

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
