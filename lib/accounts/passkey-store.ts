// Passkeys at rest (docs/DESIGN.md 18): each credential in its account's partition (listed by key), one
// pointer item per credential id (a discoverable login finds the account by key, never by a scan or an
// index), and the single-use WebAuthn challenges, taken by a conditional delete so a replay finds nothing.
import { epochSeconds, type Item, type Key, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import type { Account } from './model.ts';
import { accountKey } from './repository.ts';

/** The passkeys one account may hold. */
export const MAX_PASSKEYS = 10;
/** A WebAuthn challenge lives this long (and is used once). */
export const PASSKEY_CHALLENGE_SECONDS = 300;

const PASSKEY_PREFIX = 'passkey#';
export const passkeyKey = (accountId: string, credentialId: string): Key => ({
  pk: `account#${accountId}`,
  sk: `${PASSKEY_PREFIX}${credentialId}`,
});
export const passkeyPointerKey = (credentialId: string): Key => ({
  pk: `passkey#${credentialId}`,
  sk: 'passkey',
});
export const webauthnChallengeKey = (challenge: string): Key => ({
  pk: `webauthn#${challenge}`,
  sk: 'challenge',
});

/** A passkey as stored, without its key. */
export interface PasskeyFields {
  credential_id: string;
  /** The COSE public key, base64url (not a secret). */
  public_key: string;
  counter: number;
  transports?: string[];
  name: string;
  created_at: string;
  last_used_at?: string;
}

export interface PasskeyItem extends PasskeyFields, Item {
  pk: string;
  sk: string;
}

/** What a challenge is for: adding a passkey, a passwordless login at a door, or a login's second factor. */
export type ChallengePurpose = 'register' | 'login' | 'second_factor';

export interface ChallengeItem extends Item {
  purpose: ChallengePurpose;
  /** The account it was issued to; absent for a discoverable login (the credential names the account). */
  account_id?: string;
  /** `login`: the door it was issued at. */
  door?: 'user' | 'admin';
  /** `second_factor`: the login challenge (its jti) it answers. */
  login_challenge?: string;
  expires_at: number;
}

export interface PasskeyStoreDeps {
  table: Table;
}

export class PasskeyStore {
  constructor(private readonly deps: PasskeyStoreDeps) {}

  /** Records a challenge, alive for PASSKEY_CHALLENGE_SECONDS. */
  async issueChallenge(challenge: string, facts: Omit<ChallengeItem, 'expires_at'>): Promise<void> {
    const now = this.deps.table.clock();
    await this.deps.table.putNew({
      ...webauthnChallengeKey(challenge),
      ...facts,
      created_at: now.toISOString(),
      expires_at: epochSeconds(now) + PASSKEY_CHALLENGE_SECONDS,
    });
  }

  /**
   * Takes the challenge for `purpose` once: deleted if it exists, is unexpired and is for that purpose.
   * A replay, an expired or a foreign challenge is a ConditionFailedError.
   */
  async takeChallenge(challenge: string, purpose: ChallengePurpose): Promise<ChallengeItem> {
    return this.deps.table.take<ChallengeItem>(webauthnChallengeKey(challenge), {
      ConditionExpression: 'attribute_exists(pk) AND purpose = :purpose AND #expires > :now',
      ExpressionAttributeNames: { '#expires': 'expires_at' },
      ExpressionAttributeValues: { ':purpose': purpose, ':now': epochSeconds(this.deps.table.clock()) },
    });
  }

  /** The account a credential id belongs to, read by key. */
  async ownerOf(credentialId: string): Promise<string | undefined> {
    const pointer = await this.deps.table.get<{ account_id: string }>(passkeyPointerKey(credentialId));
    return pointer?.account_id;
  }

  async get(accountId: string, credentialId: string): Promise<PasskeyItem | undefined> {
    return this.deps.table.get<PasskeyItem>(passkeyKey(accountId, credentialId));
  }

  /** The account's passkeys, oldest credential id first (at most MAX_PASSKEYS: one query page). */
  async list(accountId: string): Promise<PasskeyItem[]> {
    const { items } = await this.deps.table.query<PasskeyItem>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `account#${accountId}`, ':prefix': PASSKEY_PREFIX },
    });
    return items;
  }

  /**
   * Adds a passkey with its pointer and counts it on the account, in one transaction: item 0 the passkey,
   * 1 the pointer (a credential id is registered once, to one account), 2 the account (at most
   * MAX_PASSKEYS, still active, and still at the session epoch of the session adding it: a registration
   * that lands after a password reset is refused, not kept past it).
   */
  async add(account: Pick<Account, 'id' | 'session_epoch'>, passkey: PasskeyFields): Promise<void> {
    await this.deps.table.transact([
      {
        Put: {
          Item: { ...passkeyKey(account.id, passkey.credential_id), ...passkey },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          Item: { ...passkeyPointerKey(passkey.credential_id), account_id: account.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Update: {
          Key: accountKey(account.id),
          UpdateExpression: 'ADD passkey_count :one',
          ConditionExpression:
            'attribute_exists(pk) AND #status = :active AND session_epoch = :sep AND (attribute_not_exists(passkey_count) OR passkey_count < :max)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':one': 1,
            ':max': MAX_PASSKEYS,
            ':active': 'active',
            ':sep': account.session_epoch,
          },
        },
      },
    ]);
  }

  /** Removes one passkey, its pointer and its count; a ConditionFailedError if it is not there. */
  async remove(accountId: string, credentialId: string): Promise<void> {
    await this.deps.table.transact(this.removalItems(accountId, [credentialId]));
  }

  /** Removes every passkey of the account (the administrators' second-factor reset); answers how many. */
  async removeAll(accountId: string): Promise<number> {
    const passkeys = await this.list(accountId);
    if (passkeys.length === 0) return 0;
    await this.deps.table.transact(
      this.removalItems(
        accountId,
        passkeys.map((passkey) => passkey.credential_id),
      ),
    );
    return passkeys.length;
  }

  /**
   * The deletes of these passkeys and their pointers, without the account's count: a password reset joins
   * them to its own update of the account, which drops the count.
   */
  deletions(accountId: string, credentialIds: string[]): TransactItem[] {
    return credentialIds.flatMap((id): TransactItem[] => [
      { Delete: { Key: passkeyKey(accountId, id), ConditionExpression: 'attribute_exists(pk)' } },
      { Delete: { Key: passkeyPointerKey(id) } },
    ]);
  }

  private removalItems(accountId: string, credentialIds: string[]): TransactItem[] {
    return [
      ...this.deletions(accountId, credentialIds),
      {
        Update: {
          Key: accountKey(accountId),
          UpdateExpression: 'ADD passkey_count :minus',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':minus': -credentialIds.length },
        },
      },
    ];
  }

  /**
   * Records a use: the new signature counter (which must have grown, unless the authenticator keeps none:
   * both zero) and the time. Two uses of one counter value: the second fails its condition.
   */
  async recordUse(accountId: string, credentialId: string, counter: number): Promise<void> {
    await this.deps.table.update(passkeyKey(accountId, credentialId), {
      UpdateExpression: 'SET #counter = :counter, last_used_at = :now',
      ConditionExpression:
        counter > 0
          ? 'attribute_exists(pk) AND #counter < :counter'
          : 'attribute_exists(pk) AND #counter = :zero',
      ExpressionAttributeNames: { '#counter': 'counter' },
      ExpressionAttributeValues: {
        ':counter': counter,
        ':now': this.deps.table.clock().toISOString(),
        ...(counter > 0 ? {} : { ':zero': 0 }),
      },
    });
  }
}
