// Every write to an account's second factor (TOTP secret, replay guard, recovery codes), each conditional
// on the account still being as its caller read it; a failed condition is a ConditionFailedError.
import type { TransactItem } from '#lib/platform/db/table.ts';
import type { Account } from './model.ts';
import { AccountWrites, accountKey } from './repository.ts';

/**
 * Records TOTP time step `step` as used, only if no later-or-equal step was used before: the replay guard
 * shared by every write that accepts a code.
 */
function stepGuard(step: number) {
  return {
    condition: '(attribute_not_exists(totp_last_step) OR totp_last_step < :step)',
    values: { ':step': step },
  };
}

export class SecondFactorWrites extends AccountWrites {
  /** Stores a new sealed TOTP secret awaiting its first code; only while TOTP is off. */
  async setPendingSecret(accountId: string, sealed: string): Promise<void> {
    await this.table.update(accountKey(accountId), {
      UpdateExpression: 'SET totp_pending_enc = :sealed, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND totp_enabled = :false',
      ExpressionAttributeValues: { ':sealed': sealed, ':now': this.now(), ':false': false },
    });
  }

  /**
   * The pending secret (still the one the code was checked against) becomes the account's, with its first
   * set of recovery codes.
   */
  async enable(accountId: string, pending: string, step: number, digests: Set<string>): Promise<Account> {
    const guard = stepGuard(step);
    return this.updated(accountId, {
      UpdateExpression:
        'SET totp_enabled = :true, totp_secret_enc = :pending, totp_last_step = :step, recovery_code_digests = :digests, updated_at = :now REMOVE totp_pending_enc',
      ConditionExpression: `attribute_exists(pk) AND totp_enabled = :false AND totp_pending_enc = :pending AND ${guard.condition}`,
      ExpressionAttributeValues: {
        ...guard.values,
        ':true': true,
        ':false': false,
        ':pending': pending,
        ':digests': digests,
        ':now': this.now(),
      },
    });
  }

  /** Turns TOTP off if `secret` is still the account's; `step`, when a code was given, is spent. */
  async disable(accountId: string, secret: string, step: number | undefined): Promise<Account> {
    const guard = step === undefined ? undefined : stepGuard(step);
    return this.updated(accountId, {
      UpdateExpression: `SET totp_enabled = :false, updated_at = :now${guard ? ', totp_last_step = :step' : ''} REMOVE totp_secret_enc, totp_pending_enc, recovery_code_digests`,
      ConditionExpression: `attribute_exists(pk) AND totp_enabled = :true AND totp_secret_enc = :secret${guard ? ` AND ${guard.condition}` : ''}`,
      ExpressionAttributeValues: {
        ...(guard?.values ?? {}),
        ':true': true,
        ':false': false,
        ':secret': secret,
        ':now': this.now(),
      },
    });
  }

  /**
   * An administrator's reset: TOTP off, secrets and recovery codes gone, every session ended. The replay
   * guard (`totp_last_step`) stays, as it does across disable/enable.
   */
  async adminReset(accountId: string): Promise<Account> {
    return this.updated(accountId, {
      UpdateExpression:
        'SET totp_enabled = :false, updated_at = :now REMOVE totp_secret_enc, totp_pending_enc, recovery_code_digests ADD session_epoch :one',
      ConditionExpression: 'attribute_exists(pk) AND totp_enabled = :true',
      ExpressionAttributeValues: { ':true': true, ':false': false, ':one': 1, ':now': this.now() },
    });
  }

  /** Ends every session of the account (an administrator's reset of an account whose factor was passkeys). */
  async endSessions(accountId: string): Promise<Account> {
    return this.updated(accountId, {
      UpdateExpression: 'SET updated_at = :now ADD session_epoch :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':one': 1, ':now': this.now() },
    });
  }

  /** A new set of recovery codes replaces the old one, while TOTP is on with the secret the caller read. */
  async replaceRecoveryCodes(account: Account, digests: Set<string>): Promise<Account> {
    return this.updated(account.id, {
      UpdateExpression: 'SET recovery_code_digests = :digests, updated_at = :now',
      ConditionExpression: 'attribute_exists(pk) AND totp_enabled = :true AND totp_secret_enc = :secret',
      ExpressionAttributeValues: {
        ':digests': digests,
        ':true': true,
        ':secret': account.totp_secret_enc,
        ':now': this.now(),
      },
    });
  }

  /**
   * The account half of a TOTP login: spends `step`, provided TOTP is still on, no session-ending change
   * happened since the challenge was issued, and the account is active. Joins the challenge's deletion.
   */
  totpLoginItem(account: Account, step: number): TransactItem {
    const guard = stepGuard(step);
    return {
      Update: {
        Key: accountKey(account.id),
        UpdateExpression: 'SET totp_last_step = :step',
        ConditionExpression: `${guard.condition} AND ${loginStillValid}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ...guard.values,
          ':true': true,
          ':sep': account.session_epoch,
          ':active': 'active',
        },
      },
    };
  }

  /**
   * The account half of a recovery-code login: removes the code's digest, provided it is still there
   * (each code works once) and the login is still valid as for a TOTP code. Joins the challenge's deletion.
   */
  recoveryLoginItem(account: Account, digest: string): TransactItem {
    return {
      Update: {
        Key: accountKey(account.id),
        UpdateExpression: 'DELETE recovery_code_digests :used',
        ConditionExpression: `contains(recovery_code_digests, :digest) AND ${loginStillValid}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':used': new Set([digest]),
          ':digest': digest,
          ':true': true,
          ':sep': account.session_epoch,
          ':active': 'active',
        },
      },
    };
  }
}

const loginStillValid = 'totp_enabled = :true AND session_epoch = :sep AND #status = :active';
