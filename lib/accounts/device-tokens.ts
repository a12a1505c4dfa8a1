// Device tokens (docs/ACCOUNTS.md "Device tokens"): what a browser or client keeps from a successful login so
// that its owner's next login is not held by the per-account guessing guard, which anyone who knows the
// username can keep closed. 32 random bytes, base64url, stored only as a SHA-256 digest (like API tokens)
// in the account's partition, for 90 days. A token carries its own guard instead: every login that
// presents it takes one of its 10 failure slots before the password is evaluated; a right password
// gives the slots back, and the 10th failure voids the token for good.
//
// A token is ended by a password reset and by disabling the account (both move the account's device
// epoch, which every token records when issued), and by the owner's revoke-others (which deletes every
// token but the one of the caller's session). Each successful login replaces the token it presented.
import { createHash, randomBytes } from 'node:crypto';
import {
  conditionFailedReturns,
  epochSeconds,
  type Item,
  type Key,
  type Table,
} from '#lib/platform/db/table.ts';
import type { Account } from './model.ts';

export const DEVICE_TOKEN_TTL_SECONDS = 90 * 24 * 3600;
/** Failed passwords a device token takes before it is void. */
export const DEVICE_TOKEN_MAX_FAILURES = 10;
/** 32 bytes in base64url; anything else is nobody's token (and is never looked up). */
const DEVICE_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const PREFIX = 'device#';

export const deviceDigest = (token: string) => createHash('sha256').update(token).digest('hex');

export const deviceKey = (accountId: string, digest: string): Key => ({
  pk: `account#${accountId}`,
  sk: `${PREFIX}${digest}`,
});

export interface DeviceItem extends Item {
  pk: string;
  sk: string;
  account_id: string;
  /** The account's device epoch when issued: a token of an older epoch is dead. */
  dep: number;
  /** The session issued with it: revoke-others spares the token of the caller's session. */
  sid: string;
  failures: number;
  created_at: string;
  expires_at: number;
}

/** A token presented at login, once its slot is taken: the digest names it for the later writes. */
export interface PresentedDevice {
  digest: string;
  item: DeviceItem;
}

export interface DeviceTokensDeps {
  table: Table;
}

export class DeviceTokens {
  constructor(private readonly deps: DeviceTokensDeps) {}

  /**
   * Takes one failure slot of `token` for `accountId`: the token as stored when it is live (of that
   * account, unexpired, with a slot left), else undefined and nothing written. The account's device epoch
   * is checked by `belongsTo` once the account is read.
   */
  async take(accountId: string, token: string | undefined): Promise<PresentedDevice | undefined> {
    if (!token || !DEVICE_TOKEN_SHAPE.test(token)) return undefined;
    const digest = deviceDigest(token);
    const item = await this.deps.table
      .update<DeviceItem>(deviceKey(accountId, digest), {
        UpdateExpression: 'ADD failures :one',
        ConditionExpression:
          'attribute_exists(pk) AND account_id = :account AND failures < :max AND expires_at > :now',
        ExpressionAttributeValues: {
          ':one': 1,
          ':account': accountId,
          ':max': DEVICE_TOKEN_MAX_FAILURES,
          ':now': epochSeconds(this.deps.table.clock()),
        },
      })
      .catch(conditionFailedReturns(undefined));
    return item ? { digest, item } : undefined;
  }

  /** Whether a taken token is still one of this account's (same device epoch, account active). */
  belongsTo(device: PresentedDevice, account: Account | undefined): boolean {
    return (
      account !== undefined &&
      account.status === 'active' &&
      device.item.account_id === account.id &&
      device.item.dep === (account.device_epoch ?? 0)
    );
  }

  /** The right password (before its second factor): the slots the token took come back. */
  async passed(accountId: string, digest: string): Promise<void> {
    await this.deps.table
      .update(deviceKey(accountId, digest), {
        UpdateExpression: 'SET failures = :zero',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0 },
      })
      .catch(conditionFailedReturns(undefined));
  }

  /** A new token for the session `sid` of the account, and the item that makes it live. */
  prepare(account: Account, sid: string): { token: string; item: DeviceItem } {
    const token = randomBytes(32).toString('base64url');
    const now = this.deps.table.clock();
    return {
      token,
      item: {
        ...(deviceKey(account.id, deviceDigest(token)) as { pk: string; sk: string }),
        account_id: account.id,
        dep: account.device_epoch ?? 0,
        sid,
        failures: 0,
        created_at: now.toISOString(),
        expires_at: epochSeconds(now) + DEVICE_TOKEN_TTL_SECONDS,
      },
    };
  }

  /** Revoke-others: every token of the account but the one issued with the session `keepSid`. */
  async endOthers(accountId: string, keepSid: string | undefined): Promise<number> {
    const doomed: DeviceItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.table.query<DeviceItem>({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': `account#${accountId}`, ':prefix': PREFIX },
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      doomed.push(...page.items.filter((item) => item.sid !== keepSid));
      start = page.lastKey;
    } while (start);
    await Promise.all(doomed.map((item) => this.deps.table.delete({ pk: item.pk, sk: item.sk })));
    return doomed.length;
  }
}
