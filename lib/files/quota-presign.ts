// Presigned bytes held against the quota: a presign of an account with a quota holds its declared size on
// the account's single usage item until the upload is confirmed (or abandoned) or the presign expires, so
// the bytes an account may still PUT never exceed what its quota has room for. The holds are a map on the
// item (pending id -> bytes, expiry) beside their sum; the conditional write on the sum makes concurrent
// presigns race-safe without serialising them. Expiry needs no job: an expired hold counts for nothing
// when read, and the next presign of that account removes it. Accounts without a quota (administrators)
// hold nothing and write nothing, so no item takes every presign of the static token.
import { errors } from '#lib/core/errors.ts';
import type { Key, TransactItem } from '#lib/platform/db/table.ts';
import type { UsageState } from './quota-model.ts';
import { type PresignHold, sameGrant, type UsageItem, usageKey } from './usage.ts';

/**
 * Most live holds an account may have at once: each is a few dozen bytes of its usage item (400 KB at
 * most), and a client uploading in parallel needs a handful.
 */
export const MAX_PRESIGN_HOLDS = 100;

type Update = Omit<NonNullable<TransactItem['Update']>, 'TableName' | 'Key'> & { Key: Key };

export interface HoldRequest {
  /** the pending upload's id */
  id: string;
  bytes: number;
  /** epoch seconds */
  expiresAt: number;
}

/** The holds of an account's single usage item that count at `nowSeconds`, and those that lapsed. */
export function holdsOf(
  single: UsageItem | undefined,
  nowSeconds: number,
): { liveBytes: number; live: number; expired: Array<[string, PresignHold]> } {
  const expired: Array<[string, PresignHold]> = [];
  let live = 0;
  let expiredBytes = 0;
  for (const [id, hold] of Object.entries(single?.presigned ?? {})) {
    if (hold.expires_at > nowSeconds) live += 1;
    else {
      expired.push([id, hold]);
      expiredBytes += hold.bytes;
    }
  }
  return { liveBytes: (single?.presigned_bytes ?? 0) - expiredBytes, live, expired };
}

/**
 * The write that holds `request.bytes` for a presign, or the refusal: 507 when the usage, the live holds
 * and these bytes exceed the quota (`used_bytes` then counts the held bytes too: what the room is measured
 * against), 429 past MAX_PRESIGN_HOLDS live holds. The write removes the lapsed holds it read and holds
 * only while the usage has not grown, the holds' sum leaves room and the grant is the one read.
 */
export function holdUpdate(
  state: UsageState,
  single: UsageItem | undefined,
  quotaBytes: number,
  request: HoldRequest,
  nowSeconds: number,
): Update {
  const { liveBytes, live, expired } = holdsOf(single, nowSeconds);
  const held = state.usedBytes + Math.max(0, liveBytes);
  if (held + request.bytes > quotaBytes) throw errors.insufficientStorage(held, quotaBytes);
  if (live >= MAX_PRESIGN_HOLDS) {
    const next = Math.min(...Object.values(single?.presigned ?? {}).map((hold) => hold.expires_at));
    throw errors.tooManyRequests(
      next - nowSeconds,
      `Too many presigned uploads not yet confirmed (at most ${MAX_PRESIGN_HOLDS})`,
    );
  }
  const expiredBytes = expired.reduce((sum, [, hold]) => sum + hold.bytes, 0);
  const grant = sameGrant(state);
  const names: Record<string, string> = { '#holds': 'presigned', '#new': request.id, '#grant': 'grant' };
  const removals: string[] = [];
  const stillThere: string[] = [];
  expired.forEach(([id], index) => {
    names[`#e${index}`] = id;
    removals.push(`#holds.#e${index}`);
    stillThere.push(`attribute_exists(#holds.#e${index})`);
  });
  return {
    Key: usageKey(state.accountId),
    UpdateExpression: [
      'SET account_id = :account, #holds.#new = :hold',
      `ADD presigned_bytes :delta`,
      ...(removals.length > 0 ? [`REMOVE ${removals.join(', ')}`] : []),
    ].join(' '),
    ConditionExpression: [
      '(attribute_not_exists(used_bytes) OR used_bytes <= :used)',
      '(attribute_not_exists(presigned_bytes) OR presigned_bytes <= :room)',
      'attribute_not_exists(#holds.#new)',
      grant.expression,
      ...stillThere,
    ].join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: {
      ':account': state.accountId,
      ':hold': { bytes: request.bytes, expires_at: request.expiresAt } satisfies PresignHold,
      ':delta': request.bytes - expiredBytes,
      ':used': state.usedBytes,
      // After the write the sum is (sum - expired + bytes); with the usage it must stay within the quota.
      ':room': quotaBytes - state.usedBytes - request.bytes + expiredBytes,
      ...grant.values,
    },
  };
}

/** Creates the (empty) map of holds on the account's usage item when it has none; changes nothing else. */
export function holdsMapUpdate(accountId: string): Update {
  return {
    Key: usageKey(accountId),
    UpdateExpression: 'SET account_id = :account, #holds = if_not_exists(#holds, :empty)',
    ExpressionAttributeNames: { '#holds': 'presigned' },
    ExpressionAttributeValues: { ':account': accountId, ':empty': {} },
  };
}

/** Gives back a presign's hold (confirmed or abandoned); a hold already gone (pruned, released) is left. */
export function releaseUpdate(accountId: string, id: string, bytes: number): Update {
  return {
    Key: usageKey(accountId),
    UpdateExpression: 'REMOVE #holds.#id ADD presigned_bytes :minus',
    ConditionExpression: 'attribute_exists(#holds.#id)',
    ExpressionAttributeNames: { '#holds': 'presigned', '#id': id },
    ExpressionAttributeValues: { ':minus': -bytes },
  };
}
