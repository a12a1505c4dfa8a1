// Account records and the identifier claims that keep usernames and e-mails unique in one namespace.
import { randomUUID } from 'node:crypto';
import { ConditionFailedError, type Item, type Table, type TransactItem } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import type { Role } from '../http/types.ts';
import { isoWithOffset } from '../time.ts';

export interface Account {
  id: string;
  username: string;
  email: string | null;
  email_verified: boolean;
  role: Role;
  password_hash: string;
  status: 'active' | 'disabled';
  /** Bumped to end every session of the account at once (password change or reset). */
  session_epoch: number;
  totp_enabled: boolean;
  /** TOTP secrets, sealed with the master key. */
  totp_secret_enc?: string;
  totp_pending_enc?: string;
  /** The last TOTP time step accepted: a step is never accepted twice (replay guard). */
  totp_last_step?: number;
  created_at: string;
  updated_at: string;
}

/** What clients see of an account (DESIGN.md 5): never the hash, secrets or internal counters. */
export interface PublicAccount {
  id: string;
  username: string;
  email: string | null;
  email_verified: boolean;
  role: Role;
  totp_enabled: boolean;
  created_at: string;
}

export function publicAccount(account: Account): PublicAccount {
  return {
    id: account.id,
    username: account.username,
    email: account.email,
    email_verified: account.email_verified,
    role: account.role,
    totp_enabled: account.totp_enabled,
    // Stored as ISO 8601 UTC; shown with a numeric offset (DESIGN.md 4).
    created_at: isoWithOffset(new Date(account.created_at)),
  };
}

export const accountKey = (id: string) => ({ pk: `account#${id}`, sk: 'account' });

/** Usernames and e-mails share this key space, compared case-insensitively (SPEC.md 2.1 rule 1). */
export const identifierKey = (value: string) => ({ pk: `ident#${value.trim().toLowerCase()}`, sk: 'ident' });

const ADMIN_INDEX = 'role#admin';

function toItem(account: Account): Item & { pk: string; sk: string } {
  return {
    ...accountKey(account.id),
    ...account,
    // Administrators are listed (oldest first) through gsi2, e.g. to own uploads made with the static token.
    ...(account.role === 'admin'
      ? { gsi2pk: ADMIN_INDEX, gsi2sk: `${account.created_at}#${account.id}` }
      : {}),
  };
}

function fromItem(item: Item | undefined): Account | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, gsi2pk: _g, gsi2sk: _s, ...rest } = item;
  return rest as unknown as Account;
}

export function claimItem(value: string, accountId: string, kind: 'username' | 'email'): TransactItem {
  return {
    Put: {
      Item: { ...identifierKey(value), account_id: accountId, kind },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export function releaseItem(value: string, accountId: string): TransactItem {
  return {
    Delete: {
      Key: identifierKey(value),
      ConditionExpression: 'account_id = :id',
      ExpressionAttributeValues: { ':id': accountId },
    },
  };
}

export interface NewAccount {
  username: string;
  email: string | null;
  emailVerified: boolean;
  role: Role;
  passwordHash: string;
}

export class AccountRepository {
  constructor(private readonly table: Table) {}

  /**
   * Creates the account and claims its username and e-mail in one transaction, so of concurrent
   * registrations of the same name exactly one wins and the losers leave nothing behind.
   * `extra` items join the same transaction (e.g. consuming the registration code).
   */
  async create(input: NewAccount, extra: TransactItem[] = []): Promise<Account> {
    const now = this.table.clock().toISOString();
    const account: Account = {
      id: randomUUID(),
      username: input.username,
      email: input.email,
      email_verified: input.emailVerified,
      role: input.role,
      password_hash: input.passwordHash,
      status: 'active',
      session_epoch: 0,
      totp_enabled: false,
      created_at: now,
      updated_at: now,
    };
    const items: TransactItem[] = [
      { Put: { Item: toItem(account), ConditionExpression: 'attribute_not_exists(pk)' } },
      claimItem(input.username, account.id, 'username'),
      ...(input.email ? [claimItem(input.email, account.id, 'email')] : []),
      ...extra,
    ];
    try {
      await this.table.transact(items);
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        if (error.failedItems.includes(1)) throw errors.conflict('username: is already taken');
        if (input.email && error.failedItems.includes(2)) throw errors.conflict('email: is already in use');
      }
      throw error;
    }
    return account;
  }

  async get(id: string): Promise<Account | undefined> {
    return fromItem(await this.table.get(accountKey(id)));
  }

  /** Who holds this username or e-mail (one namespace, so "username first, then e-mail" is one look-up). */
  async ownerOf(identifier: string): Promise<string | undefined> {
    const claim = await this.table.get<{ pk: string; sk: string; account_id: string }>(
      identifierKey(identifier),
    );
    return claim?.account_id;
  }

  async findByIdentifier(identifier: string): Promise<Account | undefined> {
    const id = await this.ownerOf(identifier);
    return id ? this.get(id) : undefined;
  }

  /** The first administrator created (owner of uploads made with the static API token). */
  async firstAdmin(): Promise<Account | undefined> {
    const { items } = await this.table.query({
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': ADMIN_INDEX },
      ScanIndexForward: true,
      Limit: 1,
    });
    return fromItem(items[0]);
  }

  async anyAdmin(): Promise<boolean> {
    return (await this.firstAdmin()) !== undefined;
  }
}

export function fromAccountItem(item: Item | undefined): Account | undefined {
  return fromItem(item);
}
