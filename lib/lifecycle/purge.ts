// Deleting an account once its grace is over (docs/ACCOUNTS.md "Deleting an account"): every file (record,
// original, renditions, claim, usage), share, album, API token, passkey, session, device token, security
// event and identifier claim; orders stay for accounting, anonymized. Each step is idempotent and the
// account item and its listing entry go last, together: a run that stops halfway is finished by the next.
import { type DeletionItem, deletionKey } from '#lib/accounts/account-deletion.ts';
import type { ApiTokenService } from '#lib/accounts/api-tokens.ts';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import type { Account } from '#lib/accounts/model.ts';
import type { PasskeyStore } from '#lib/accounts/passkey-store.ts';
import { identityKey } from '#lib/accounts/provider-identities.ts';
import { type AccountRepository, accountKey } from '#lib/accounts/repository.ts';
import type { OrderRepository } from '#lib/billing/orders.ts';
import { renewalKey } from '#lib/billing/renewals.ts';
import { ownerAlbums } from '#lib/files/albums.ts';
import type { FileDeletionService } from '#lib/files/file-deletion.ts';
import type { FileRepository } from '#lib/files/files.ts';
import { ownerIndexPage } from '#lib/files/index-page.ts';
import { ownerPurgesPartition, type PurgeMark } from '#lib/files/purge-items.ts';
import { ownerShares } from '#lib/files/shares.ts';
import { usageKey } from '#lib/files/usage.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { conditionFailedReturns, type Key, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { webhooksPartition } from '#lib/webhooks/endpoints.ts';

const BATCH = 25;

export interface AccountPurgeDeps {
  table: Table;
  accounts: AccountRepository;
  files: FileRepository;
  deletions: FileDeletionService;
  orders: OrderRepository;
  apiTokens: ApiTokenService;
  passkeys: PasskeyStore;
}

export class AccountPurge {
  constructor(private readonly deps: AccountPurgeDeps) {}

  /** The listed deletion of this account, if it is due and still wanted; whether it deleted the account. */
  async process(accountId: string): Promise<boolean> {
    const { table } = this.deps;
    const [account, listed] = await Promise.all([
      this.deps.accounts.get(accountId),
      table.get<DeletionItem>(deletionKey(accountId)),
    ]);
    if (!listed) return false;
    // Cancelled by a login (its transaction removes both), or rescheduled: this entry is not wanted.
    if (account && account.deletion_scheduled_for !== listed.scheduled_for) {
      await table
        .delete(deletionKey(accountId), {
          ConditionExpression: 'scheduled_for = :due',
          ExpressionAttributeValues: { ':due': listed.scheduled_for },
        })
        .catch(conditionFailedReturns(undefined));
      return false;
    }
    if (listed.scheduled_for > table.clock().toISOString()) return false;
    if (account) await this.purge(await this.begin(account, listed.scheduled_for));
    await table.transact([
      { Delete: { Key: accountKey(accountId) } },
      { Delete: { Key: deletionKey(accountId) } },
    ]);
    log.info('account deleted', { account_id: accountId });
    return true;
  }

  /** From here no login gets in (the account is disabled) nor cancels it; every session and token ends. */
  private async begin(account: Account, due: string): Promise<Account> {
    if (account.status === 'disabled') return account;
    return (await this.deps.table.update(accountKey(account.id), {
      UpdateExpression:
        'SET #status = :disabled, session_epoch = session_epoch + :one, device_epoch = if_not_exists(device_epoch, :zero) + :one',
      ConditionExpression: 'deletion_scheduled_for = :due',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':disabled': 'disabled', ':one': 1, ':zero': 0, ':due': due },
    })) as unknown as Account;
  }

  private async purge(account: Account): Promise<void> {
    const { id } = account;
    const { table, files, deletions, orders } = this.deps;
    // Its webhook endpoints go first, so none is called for what the purge deletes (docs/WEBHOOKS.md).
    await Promise.all([
      this.deps.apiTokens.deleteAll(id),
      this.deps.passkeys.removeAll(id),
      this.sweep(webhooksPartition(id), new Set()),
    ]);
    // Each file as its owner's DELETE does it: record, claim and usage, then the original and renditions.
    // Pages are read on by cursor: the index may still list what was just deleted.
    await eachPage(
      (cursor) => files.list(account, { limit: BATCH, ...(cursor ? { cursor } : {}) }),
      (record) => deletions.delete(id, record.id),
    );
    // Then those no listing shows: in the trash, or expired and not yet swept (each has its purge mark).
    await eachPage(
      (cursor) =>
        ownerIndexPage<PurgeMark>(
          table,
          ownerPurgesPartition(id),
          { pk: /^purge#/, sk: 'purge' },
          {
            limit: BATCH,
            ...(cursor ? { cursor } : {}),
          },
        ),
      (mark) => deletions.purgeMarked(mark),
    );
    // Shares (revoked ones are out of the listing and already answer 410) and albums: the items go.
    for (const partition of [ownerShares(id), ownerAlbums(id)]) await this.deleteListed(partition);
    await eachPage(
      (cursor) => orders.listByUser(id, BATCH, cursor),
      (order) => orders.anonymize(order.id),
    );
    const claims = [account.username, account.email].filter((value): value is string => !!value);
    await Promise.all(
      claims.map((value) =>
        table
          .delete(identifierKey(value), {
            ConditionExpression: 'account_id = :id',
            ExpressionAttributeValues: { ':id': id },
          })
          .catch(conditionFailedReturns(undefined)),
      ),
    );
    await this.releaseIdentities(id);
    await table.writeBatch([], [renewalKey(id)]);
    // Usage, sessions, device tokens, security events, the export: everything left in the two partitions.
    const keep = new Set(['account', 'deletion']);
    for (const partition of [usageKey(id).pk, accountKey(id).pk]) await this.sweep(partition, keep);
  }

  /**
   * The sign-in providers' identities the account held (docs/ACCOUNTS.md "Sign in with another provider"):
   * each identity's claim goes, so it may sign up again; the account's own rows go with its partition.
   */
  private async releaseIdentities(accountId: string): Promise<void> {
    const { items } = await this.deps.table.query<Key & { provider?: string; subject?: string }>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :identity)',
      ExpressionAttributeValues: { ':pk': accountKey(accountId).pk, ':identity': 'identity#' },
    });
    await Promise.all(
      items.map(({ provider, subject }) =>
        this.deps.table
          .delete(identityKey(String(provider), String(subject)), {
            ConditionExpression: 'account_id = :id',
            ExpressionAttributeValues: { ':id': accountId },
          })
          .catch(conditionFailedReturns(undefined)),
      ),
    );
  }

  /** Deletes every item an `owner` index partition lists, a batch at a time. */
  private async deleteListed(partition: string): Promise<void> {
    let start: Record<string, unknown> | undefined;
    do {
      const { items, lastKey } = await this.deps.table.query<Key>({
        IndexName: 'owner',
        KeyConditionExpression: 'gsi1pk = :partition',
        ExpressionAttributeValues: { ':partition': partition },
        Limit: BATCH,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      if (items.length > 0)
        await this.deps.table.writeBatch(
          [],
          items.map(({ pk, sk }) => ({ pk, sk })),
        );
      start = lastKey;
    } while (start);
  }

  /** Deletes every item of a table partition but those whose sort key `keep` names. */
  private async sweep(partition: string, keep: Set<string>): Promise<void> {
    let start: Record<string, unknown> | undefined;
    do {
      const { items, lastKey } = await this.deps.table.query<Key>({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ProjectionExpression: 'pk, sk',
        Limit: BATCH,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      const gone = items.filter(({ sk }) => !keep.has(sk));
      if (gone.length > 0) await this.deps.table.writeBatch([], gone);
      start = lastKey;
    } while (start);
  }
}

/** Works through every page of a listing, a page's items at once. */
async function eachPage<T>(
  read: (cursor?: string) => Promise<Page<T>>,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    await Promise.all(page.items.map(work));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}
