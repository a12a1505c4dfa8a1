// Closing an account (docs/ACCOUNTS.md "Deleting an account"): its owner asks with the password (and the
// second factor when TOTP is on); the lifecycle worker deletes it after DELETION_GRACE_DAYS, unless a login
// cancels it first. The flag is on the account record, which every login reads anyway, so a login costs
// nothing more while no deletion is pending. The worker finds due deletions through the sparse sharded
// listing `deletions#<n>` of the `listing` index, sorted by due date: one item per pending deletion.
import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import { conditionFailedAs, type Item, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';
import type { Account } from './model.ts';
import { normalizeRecoveryCode, type RecoveryCodeHasher } from './recovery-codes.ts';
import { accountChanged, accountKey } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecurityChanges } from './security-changes.ts';
import { checkTotp, openTotpSecret, totpRefusal } from './totp.ts';

export const DELETION_GRACE_DAYS = 7;
/** The listing the lifecycle worker reads (lib/lifecycle/worker.ts). */
export const DELETIONS_LISTING = 'deletions';
/** The pending deletion's listing item, in the account's own partition. */
export const deletionKey = (accountId: string) => ({ pk: `account#${accountId}`, sk: 'deletion' });

export interface DeletionItem extends Item {
  pk: string;
  sk: string;
  account_id: string;
  /** ISO 8601 UTC, as on the account's `deletion_scheduled_for`. */
  scheduled_for: string;
}

/** The clauses that spend the second factor in the scheduling write itself (one update of the account). */
interface Proof {
  set: string;
  rest: string;
  condition: string;
  values: Record<string, unknown>;
}

export interface AccountDeletionDeps {
  table: Table;
  requestLimits: RequestLimits;
  masterKey: () => Promise<MasterKey>;
  recoveryCodes: RecoveryCodeHasher;
  listingShards: number;
  changes: SecurityChanges;
}

export class AccountDeletion {
  constructor(private readonly deps: AccountDeletionDeps) {}

  /**
   * POST /api/v1/account/delete `{current_password, code?}`: schedules the deletion DELETION_GRACE_DAYS
   * ahead. A wrong password is the password change's answer (400 naming current_password); with TOTP on,
   * `code` (a TOTP code, each step once, or a recovery code, spent) is required too.
   */
  async schedule(
    account: Account,
    input: { current_password: string; code?: string | undefined },
    client: ClientInfo,
  ) {
    if (account.role === 'admin') {
      throw errors.badRequest(
        'An administrator account cannot be deleted by its owner: another administrator disables it, so the service never loses its last administrator',
      );
    }
    await this.deps.requestLimits.requirePassword(account, input.current_password, 'current_password');
    const proof = account.totp_enabled ? await this.secondFactor(account, input.code) : undefined;
    const due = new Date(this.deps.table.clock().getTime() + DELETION_GRACE_DAYS * 86_400_000).toISOString();
    const listing = { name: DELETIONS_LISTING, count: this.deps.listingShards };
    const item: DeletionItem = { ...deletionKey(account.id), account_id: account.id, scheduled_for: due };
    await this.deps.table
      .transact([
        {
          Update: {
            Key: accountKey(account.id),
            UpdateExpression: `SET deletion_scheduled_for = :due${proof?.set ?? ''}${proof?.rest ?? ''}`,
            ConditionExpression: `#status = :active AND session_epoch = :sep${proof?.condition ?? ''}`,
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':due': due,
              ':active': 'active',
              ':sep': account.session_epoch,
              ...proof?.values,
            },
          },
        },
        {
          Put: {
            Item: { ...item, gsi2pk: shardPartition(listing, account.id), gsi2sk: `${due}#${account.id}` },
          },
        },
      ])
      .catch(conditionFailedAs(() => (proof ? totpRefusal('used') : accountChanged())));
    // The owner learns of it by mail whoever asked: signing in cancels it.
    await this.deps.changes.record(account, 'deletion_scheduled', client, { kind: 'deletion_scheduled' });
    return { scheduled_for: isoWithOffset(new Date(due)) };
  }

  private async secondFactor(account: Account, code: string | undefined): Promise<Proof> {
    if (code === undefined) throw errors.badRequest('code: is required when two-step verification is on');
    const recovery = normalizeRecoveryCode(code);
    if (recovery) {
      const digest = await this.deps.recoveryCodes.digest(account.id, recovery);
      if (!account.recovery_code_digests?.has(digest)) throw errors.badRequest('code: is invalid');
      return {
        set: '',
        rest: ' DELETE recovery_code_digests :used',
        condition: ' AND contains(recovery_code_digests, :digest)',
        values: { ':used': new Set([digest]), ':digest': digest },
      };
    }
    const secret = await openTotpSecret(this.deps.masterKey, account.id, account.totp_secret_enc ?? '');
    const checked = await checkTotp(secret, code, this.deps.table.clock(), account.totp_last_step);
    if ('refused' in checked) throw totpRefusal(checked.refused);
    return {
      set: ', totp_last_step = :step',
      rest: '',
      condition: ' AND (attribute_not_exists(totp_last_step) OR totp_last_step < :step)',
      values: { ':step': checked.step },
    };
  }
}

/**
 * A login during the grace cancels the deletion (called by every login's answer, only when the account
 * carries the flag). Once the worker has begun deleting (the account is disabled then) the login is refused.
 */
export async function cancelDeletion(table: Table, account: Account): Promise<void> {
  await table
    .transact([
      {
        Update: {
          Key: accountKey(account.id),
          UpdateExpression: 'REMOVE deletion_scheduled_for',
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active' },
        },
      },
      { Delete: { Key: deletionKey(account.id) } },
    ])
    .catch(conditionFailedAs(() => errors.forbidden('account disabled')));
  delete account.deletion_scheduled_for;
}
