// Account records and every write to them; new accounts claim their identifiers in the same transaction.
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import {
  ConditionFailedError,
  conditionFailedAs,
  conditionFailedReturns,
  type Item,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import {
  type ClaimItem,
  claimItem,
  type IdentifierKind,
  identifierKey,
  indexClaimItem,
  type LoginCopy,
  loginCopyUpdate,
} from './identifiers.ts';
import { guardKey, guardSubject } from './login-guard.ts';
import type { Account, Role } from './model.ts';

/** What clients see of an account (docs/DESIGN.md 5): never the hash, secrets or internal counters. */
export type PublicAccount = Pick<
  Account,
  'id' | 'username' | 'email' | 'email_verified' | 'role' | 'totp_enabled' | 'created_at'
>;

export function publicAccount(account: Account): PublicAccount {
  return {
    id: account.id,
    username: account.username,
    email: account.email,
    email_verified: account.email_verified,
    role: account.role,
    totp_enabled: account.totp_enabled,
    // Stored as ISO 8601 UTC; shown with a numeric offset (docs/DESIGN.md 4).
    created_at: isoWithOffset(new Date(account.created_at)),
  };
}

export const accountKey = (id: string) => ({ pk: `account#${id}`, sk: 'account' });

/** A conditional write of the account lost to a concurrent change. */
export const accountChanged = () => errors.conflict('The account was changed by another request; try again');

/**
 * The listing of administrators (one partition of the `listing` index, unsharded: only an administrator
 * creates one). The index holds no account attribute, so it is read for keys and the accounts by key.
 */
const ADMIN_LISTING = 'role#admin';

function toItem(account: Account): Item & { pk: string; sk: string } {
  return {
    ...accountKey(account.id),
    ...account,
    // Administrators are listed oldest first, e.g. to own uploads made with the static token.
    ...(account.role === 'admin'
      ? { gsi2pk: ADMIN_LISTING, gsi2sk: `${account.created_at}#${account.id}` }
      : {}),
  };
}

export function fromAccountItem(item: Item | undefined): Account | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _g, gsi2sk: _s, ...rest } = item;
  return rest as unknown as Account;
}

export interface NewAccount {
  username: string;
  email: string | null;
  emailVerified: boolean;
  role: Role;
  passwordHash: string;
  /** Created by a sign-in provider (its identity linked in the same transaction): no password anyone knows. */
  viaProvider?: boolean;
  /** Created by an import (docs/COMPAT.md): no password anyone knows until its owner resets it. */
  passwordUnset?: boolean;
}

/** A new, active account with no second factor, as created at `now` (an ISO timestamp). */
export function newAccount(id: string, input: NewAccount, now: string): Account {
  return {
    id,
    username: input.username,
    email: input.email,
    email_verified: input.emailVerified,
    role: input.role,
    password_hash: input.passwordHash,
    status: 'active',
    session_epoch: 0,
    totp_enabled: false,
    // Its claims are written with the search index (identifiers.ts).
    ident_indexed: true,
    ...(input.viaProvider || input.passwordUnset ? { unusable_hash: input.passwordHash } : {}),
    ...(input.viaProvider ? { identity_count: 1 } : {}),
    created_at: now,
    updated_at: now,
  };
}

/** What every class writing account records shares: the table, its clock, and an update answering the account. */
export interface AccountWritesDeps {
  table: Table;
}

export class AccountWrites {
  protected readonly table: Table;

  constructor(deps: AccountWritesDeps) {
    this.table = deps.table;
  }

  protected now(): string {
    return this.table.clock().toISOString();
  }

  protected async updated(accountId: string, update: Parameters<Table['update']>[1]): Promise<Account> {
    return fromAccountItem(await this.table.update(accountKey(accountId), update))!;
  }
}

export interface AccountRepositoryDeps extends AccountWritesDeps {
  /** `listing_shards`: identifier claims are listed in the back office's listing over this many shards. */
  listingShards: number;
}

export class AccountRepository extends AccountWrites {
  constructor(private readonly deps: AccountRepositoryDeps) {
    super(deps);
  }

  get listingShards(): number {
    return this.deps.listingShards;
  }

  /** The claim of `value` for the account (a transaction item that fails when it is taken). */
  claimItem(value: string, accountId: string, kind: IdentifierKind, copy: LoginCopy): TransactItem {
    return claimItem(value, accountId, kind, copy, this.deps.listingShards);
  }

  /**
   * Creates the account and claims its username and e-mail in one transaction, so of concurrent
   * registrations of the same name exactly one wins and the losers leave nothing behind.
   * `extra` items join the same transaction (e.g. consuming the registration code).
   */
  async create(
    input: NewAccount,
    extra: TransactItem[] | ((accountId: string) => TransactItem[]) = [],
  ): Promise<Account> {
    const account = newAccount(randomUUID(), input, this.table.clock().toISOString());
    const items: TransactItem[] = [
      { Put: { Item: toItem(account), ConditionExpression: 'attribute_not_exists(pk)' } },
      this.claimItem(input.username, account.id, 'username', account),
      ...(input.email ? [this.claimItem(input.email, account.id, 'email', account)] : []),
      ...(typeof extra === 'function' ? extra(account.id) : extra),
      // Failures counted against the name while nobody held it are not the new owner's: whoever locked
      // the name in advance does not lock its first login (docs/ACCOUNTS.md "Password guessing").
      { Delete: { Key: guardKey(guardSubject(input.username, input.username)) } },
    ];
    await this.table.transact(items).catch(
      conditionFailedAs((error) => {
        if (error.failedItems.includes(1)) return errors.conflict('username: is already taken');
        if (input.email && error.failedItems.includes(2)) return errors.conflict('email: is already in use');
        return error;
      }),
    );
    return account;
  }

  async get(id: string): Promise<Account | undefined> {
    return fromAccountItem(await this.table.get(accountKey(id)));
  }

  /**
   * The usernames of these accounts, by id, in batch reads of up to 100 (one for a page of a listing);
   * an account that no longer exists is absent from the map.
   */
  async usernamesOf(ids: readonly string[]): Promise<Map<string, string>> {
    const distinct = [...new Set(ids)];
    const names = new Map<string, string>();
    for (let start = 0; start < distinct.length; start += 100) {
      const items = await this.table.getMany(distinct.slice(start, start + 100).map(accountKey));
      for (const item of items) {
        const account = fromAccountItem(item);
        if (account) names.set(account.id, account.username);
      }
    }
    return names;
  }

  /** Who holds this username or e-mail (one namespace, so "username first, then e-mail" is one look-up). */
  async ownerOf(identifier: string): Promise<string | undefined> {
    const claim = await this.table.get<{ pk: string; sk: string; account_id: string }>(
      identifierKey(identifier),
    );
    return claim?.account_id;
  }

  /** The claim of this username or e-mail as stored (with its login copy, when it has one). */
  async claimOf(identifier: string): Promise<ClaimItem | undefined> {
    return this.table.get<ClaimItem & Item>(identifierKey(identifier));
  }

  /**
   * Puts the account's current username and password hash on its claims (each only while it is still this
   * account's). Best effort: login verifies against the account item when a copy differs, so a failure
   * here costs a second verification at the next login, nothing else.
   */
  async syncLoginCopies(
    account: Pick<Account, 'id' | 'username' | 'email'>,
    copy: LoginCopy,
    claims: ReadonlyArray<string | null> = [account.username, account.email],
  ): Promise<void> {
    const values = claims.filter((value): value is string => !!value);
    await Promise.all(
      values.map((value) =>
        this.table.update(identifierKey(value), loginCopyUpdate(account.id, copy)).catch((error: unknown) => {
          if (error instanceof ConditionFailedError) return;
          log.warn('login copy of a claim not updated', {
            account_id: account.id,
            error_name: (error as Error)?.name,
          });
        }),
      ),
    );
  }

  /** The first administrator created (owner of uploads made with the static API token). */
  async firstAdmin(): Promise<Account | undefined> {
    const { items } = await this.table.query<{ pk: string; sk: string }>({
      IndexName: 'listing',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': ADMIN_LISTING },
      ScanIndexForward: true,
      Limit: 1,
    });
    const [first] = items;
    // The index gives its key only (no credential is projected): the account is read by key.
    return first ? fromAccountItem(await this.table.get({ pk: first.pk, sk: first.sk })) : undefined;
  }

  /** Every administrator, active or not, oldest first (notices to all of them: lib/billing). */
  async administrators(): Promise<Account[]> {
    const keys: Array<{ pk: string; sk: string }> = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.table.query<{ pk: string; sk: string }>({
        IndexName: 'listing',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': ADMIN_LISTING },
        ScanIndexForward: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      keys.push(...page.items.map((item) => ({ pk: item.pk, sk: item.sk })));
      startKey = page.lastKey;
    } while (startKey);
    if (keys.length === 0) return [];
    return (await this.table.getMany(keys)).flatMap((item) => {
      const account = fromAccountItem(item);
      return account ? [account] : [];
    });
  }

  async anyAdmin(): Promise<boolean> {
    return (await this.firstAdmin()) !== undefined;
  }

  // ---- writes: each throws ConditionFailedError when the account is no longer as its caller read it ----

  /** A new password hash that ends every session (epoch bump); only over the hash the caller checked. */
  async changePasswordHash(account: Account, passwordHash: string): Promise<Account> {
    const updated = await this.updated(account.id, {
      UpdateExpression: 'SET password_hash = :hash, updated_at = :now ADD session_epoch :one',
      ConditionExpression: 'attribute_exists(pk) AND password_hash = :old AND #status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':hash': passwordHash,
        ':old': account.password_hash,
        ':now': this.now(),
        ':one': 1,
        ':active': 'active',
      },
    });
    await this.syncLoginCopies(updated, updated);
    return updated;
  }

  /**
   * The account half of a password reset: new hash, session epoch bump (every session ends) and token
   * epoch bump (every API token stops working) and device epoch bump (every device token too), and no
   * passkey count (the reset deletes the passkeys in the same transaction), provided `account.email` is
   * still its verified address, it is active and its passkey count is still the one read (a passkey added
   * or removed meanwhile fails it); with `sessionEpoch` (a reset link), only while the account is still at
   * that epoch. Joins the reset code's or link's consumption.
   */
  resetPasswordItem(account: Account, passwordHash: string, sessionEpoch?: number): TransactItem {
    const passkeys = account.passkey_count ?? 0;
    return {
      Update: {
        Key: accountKey(account.id),
        UpdateExpression:
          'SET password_hash = :hash, updated_at = :now REMOVE passkey_count ADD session_epoch :one, token_epoch :one, device_epoch :one',
        ConditionExpression: `attribute_exists(pk) AND email_verified = :true AND #status = :active AND email = :email AND (${passkeys === 0 ? 'attribute_not_exists(passkey_count) OR ' : ''}passkey_count = :passkeys)${sessionEpoch === undefined ? '' : ' AND session_epoch = :sep'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':hash': passwordHash,
          ':now': this.now(),
          ':one': 1,
          ':true': true,
          ':active': 'active',
          ':email': account.email,
          ':passkeys': passkeys,
          ...(sessionEpoch === undefined ? {} : { ':sep': sessionEpoch }),
        },
      },
    };
  }

  /**
   * The same password under current hashing parameters: no epoch bump (sessions stay), and only if the
   * stored hash is still `previousHash`.
   */
  async rehashPassword(accountId: string, previousHash: string, freshHash: string): Promise<void> {
    const updated = await this.updated(accountId, {
      UpdateExpression: 'SET password_hash = :fresh',
      ConditionExpression: 'password_hash = :old',
      ExpressionAttributeValues: { ':fresh': freshHash, ':old': previousHash },
    });
    await this.syncLoginCopies(updated, updated);
  }

  /**
   * The account half of every e-mail change, guarded by `updated_at` (optimistic lock); joins the claim
   * and release of the addresses. `updatedAt` comes from the caller, which answers the record as written.
   */
  emailChangeItem(
    account: Account,
    email: string | null,
    verified: boolean,
    updatedAt: string,
  ): TransactItem {
    return {
      Update: {
        Key: accountKey(account.id),
        UpdateExpression: 'SET email = :email, email_verified = :verified, updated_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND updated_at = :previous AND #status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':email': email,
          ':verified': verified,
          ':now': updatedAt,
          ':previous': account.updated_at,
          ':active': 'active',
        },
      },
    };
  }

  /**
   * Back office: enables or disables the account. Disabling also ends every session and device token for
   * good (epoch bumps), so enabling it again does not bring a stolen session or device token back.
   */
  async setStatus(accountId: string, status: Account['status']): Promise<Account | undefined> {
    return this.updated(accountId, {
      UpdateExpression: `SET #status = :status, updated_at = :now${status === 'disabled' ? ' ADD session_epoch :one, device_epoch :one' : ''}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':status': status,
        ':now': this.now(),
        ...(status === 'disabled' ? { ':one': 1 } : {}),
      },
    }).catch(conditionFailedReturns(undefined));
  }

  /** Claims made before the search index existed join it, once per account (docs/ACCOUNTS.md). */
  async indexIdentifiers(account: Account): Promise<void> {
    if (account.ident_indexed) return;
    await this.table.transact([
      indexClaimItem(account.username, account.id, this.deps.listingShards),
      ...(account.email ? [indexClaimItem(account.email, account.id, this.deps.listingShards)] : []),
      {
        Update: {
          Key: accountKey(account.id),
          UpdateExpression: 'SET ident_indexed = :true',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':true': true },
        },
      },
    ]);
  }
}
