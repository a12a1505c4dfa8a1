// Password guessing per account (docs/ACCOUNTS.md "Password guessing"): after `threshold` consecutive
// failed passwords an account's logins answer 429 without evaluating the password until a back-off
// passes (1 minute, doubling with each further failure, at most 15 minutes); a right password resets it.
//
// A login takes a slot BEFORE its password is evaluated (a conditional update), and a slot counts as a
// failure until the password proves right. So concurrent guesses from any number of addresses are
// evaluated at most `threshold` times, then one at a time per back-off. Unknown identifiers get a guard
// of their own (keyed by a hash of the identifier), so they lock exactly like real accounts and cost the
// same writes: the guard tells nobody which accounts exist.
import { createHash } from 'node:crypto';
import { conditionFailedReturns, epochSeconds, type Item, type Table } from '#lib/platform/db/table.ts';

export interface PasswordGuessLimit {
  /** Consecutive failed passwords before the back-off starts. */
  threshold: number;
  /** The first back-off, doubled with each further failure. */
  baseLockSeconds: number;
  maxLockSeconds: number;
  /** A count of failures is forgotten after this long without a login attempt. */
  forgetAfterSeconds: number;
}

export const DEFAULT_PASSWORD_GUESS_LIMIT: PasswordGuessLimit = {
  threshold: 10,
  baseLockSeconds: 60,
  maxLockSeconds: 15 * 60,
  forgetAfterSeconds: 24 * 3600,
};

export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

interface GuardItem extends Item {
  pk: string;
  sk: string;
  attempts: number;
  /** Epoch milliseconds until which logins are refused unevaluated. */
  locked_until?: number;
  expires_at: number;
}

/**
 * Whose guard. An account's is keyed by its username (lower-cased), which a login by username names
 * before anything is read, so the slot is taken beside the first read (docs/PERFORMANCE.md "Waits on the critical path"); a login
 * by e-mail learns the username from the claim. Usernames never contain `@` (lib/http/schemas/accounts.ts), so
 * an identifier without one that nobody holds gets the guard its username would have, and one with `@`
 * (an e-mail nobody holds) a stable stand-in of the same shape.
 */
export function guardSubject(username: string | undefined, identifier: string): string {
  if (username) return `user-${username.trim().toLowerCase()}`;
  const normalized = identifier.trim().toLowerCase();
  if (!normalized.includes('@')) return `user-${normalized}`;
  return `unknown-${createHash('sha256').update(normalized).digest('hex').slice(0, 32)}`;
}

// Under `throttle#` like the other rate counters: state a refused request may legitimately change.
export const guardKey = (subject: string) => ({ pk: `throttle#login-guard#${subject}`, sk: 'guard' });

export interface LoginGuardDeps {
  table: Table;
  limit: PasswordGuessLimit;
}

export class LoginGuard {
  constructor(private readonly deps: LoginGuardDeps) {}

  /** Back-off after failure number `failures` (>= threshold). */
  lockMsAfter(failures: number): number {
    const doublings = Math.max(0, failures - this.deps.limit.threshold);
    return (
      Math.min(
        this.deps.limit.maxLockSeconds,
        this.deps.limit.baseLockSeconds * 2 ** Math.min(doublings, 30),
      ) * 1000
    );
  }

  /** Takes one evaluation slot for `subject`, or says how long to wait. */
  async admit(subject: string): Promise<Admission> {
    const key = guardKey(subject);
    for (let attempt = 0; attempt < 4; attempt++) {
      const now = this.deps.table.clock().getTime();
      const expires = epochSeconds(new Date(now)) + this.deps.limit.forgetAfterSeconds;
      // Below the threshold: one atomic increment, no read.
      const counted = await this.deps.table
        .update(key, {
          UpdateExpression: 'ADD attempts :one SET expires_at = :expires',
          ConditionExpression:
            '(attribute_not_exists(attempts) OR attempts < :free) AND (attribute_not_exists(expires_at) OR expires_at > :nowSeconds)',
          ExpressionAttributeValues: {
            ':one': 1,
            ':free': this.deps.limit.threshold - 1,
            ':expires': expires,
            ':nowSeconds': epochSeconds(new Date(now)),
          },
        })
        .then(() => true, conditionFailedReturns(false));
      if (counted) return { admitted: true };
      const current = await this.deps.table.get<GuardItem>(key, { includeExpired: true });
      if (!current || current.expires_at <= epochSeconds(new Date(now))) {
        // A forgotten count (expired, not yet deleted by DynamoDB): start again at one.
        if (
          await this.tryWrite(
            key,
            { attempts: 1, expires },
            'attribute_not_exists(pk) OR expires_at <= :nowSeconds',
            now,
          )
        ) {
          return { admitted: true };
        }
        continue;
      }
      if (current.attempts < this.deps.limit.threshold - 1) continue; // reset meanwhile: the fast path again
      if (current.locked_until !== undefined && current.locked_until > now) {
        return { admitted: false, retryAfterSeconds: Math.ceil((current.locked_until - now) / 1000) };
      }
      // At or past the threshold with no back-off running: this slot is the only one until the next
      // back-off ends, so it sets that back-off now, as if it were going to fail.
      const failures = current.attempts + 1;
      const written = await this.tryWrite(
        key,
        { attempts: failures, locked_until: now + this.lockMsAfter(failures), expires },
        'attempts = :seen AND (attribute_not_exists(locked_until) OR locked_until <= :nowMs)',
        now,
        current.attempts,
      );
      if (written) return { admitted: true };
    }
    // Lost every race: someone else holds the slot.
    return { admitted: false, retryAfterSeconds: 1 };
  }

  /** A right password: the count starts again. */
  async reset(subject: string): Promise<void> {
    await this.deps.table.delete(guardKey(subject));
  }

  /**
   * What an unknown identifier's failure writes, so that a failure costs the same write whether or not
   * the account exists (a known account's failure puts its `login_failed` event, an item of this shape).
   */
  async recordUnknownFailure(subject: string, client: { ip: string; userAgent: string }): Promise<void> {
    const now = this.deps.table.clock();
    await this.deps.table.put({
      pk: guardKey(subject).pk,
      sk: 'last-failure',
      type: 'login_failed',
      at: now.toISOString(),
      ...(client.ip ? { ip: client.ip } : {}),
      ...(client.userAgent ? { user_agent: client.userAgent } : {}),
      expires_at: epochSeconds(now) + this.deps.limit.forgetAfterSeconds,
    });
  }

  private async tryWrite(
    key: { pk: string; sk: string },
    state: { attempts: number; locked_until?: number; expires: number },
    condition: string,
    now: number,
    seen?: number,
  ): Promise<boolean> {
    const values: Record<string, unknown> = {};
    if (condition.includes(':nowSeconds')) values[':nowSeconds'] = epochSeconds(new Date(now));
    if (condition.includes(':nowMs')) values[':nowMs'] = now;
    if (condition.includes(':seen')) values[':seen'] = seen;
    return this.deps.table
      .put(
        {
          ...key,
          attempts: state.attempts,
          ...(state.locked_until === undefined ? {} : { locked_until: state.locked_until }),
          expires_at: state.expires,
        },
        { ConditionExpression: condition, ExpressionAttributeValues: values },
      )
      .then(() => true, conditionFailedReturns(false));
  }
}
