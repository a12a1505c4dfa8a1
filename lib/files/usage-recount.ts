// The one-off recount of usage from the file records (`npm run usage:recount`, docs/UPLOADS.md): counts
// records stored before quotas existed, then checks every account's counters against its records and
// corrects any drift. Safe to run while the service runs, and idempotent: a second run changes nothing.
import { conditionFailedReturns, type Item, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import { type FileItem, fileKey } from './files.ts';
import {
  isTokenItem,
  SPREAD_SLOTS,
  slotKey,
  USAGE_SHARDS,
  USAGE_SK,
  type UsageItem,
  usageAccountOf,
  usageKey,
  usageStateOf,
} from './usage.ts';

export interface RecountReport {
  /** Records stored before quotas, now counted in their owner's usage. */
  counted_files: number;
  /** Accounts whose counters disagreed with their records, and what they were set to. */
  corrected: Array<{
    account_id: string;
    before: { used_bytes: number; file_count: number };
    after: { used_bytes: number; file_count: number };
  }>;
  /** Accounts checked (any with a usage item or a record). */
  accounts: number;
}

/** Passes over accounts whose usage kept moving while they were being checked. */
const MAX_PASSES = 5;
const PARALLEL_WRITES = 8;

/**
 * Step 1 counts each uncounted record in one transaction that flags it and adds it to its owner's usage
 * (so a concurrent delete either sees the flag and gives the bytes back, or removes an uncounted record).
 * Step 2 sums every counted record per owner and, where the owner's usage items (the single one and any
 * shards, lib/files/usage.ts) add up to something else, sets the single item to the sums and deletes the
 * shards, conditioned on every item's `rev` being the one read before the records were read: any upload
 * or delete meanwhile moved a `rev` (or wrote a shard), and that account is checked again.
 */
export async function recountUsage(table: Table): Promise<RecountReport> {
  const counted = await countUncountedRecords(table);
  const report: RecountReport = { counted_files: counted, corrected: [], accounts: 0 };
  let pending: Set<string> | undefined;
  for (let pass = 0; pass < MAX_PASSES && (pending === undefined || pending.size > 0); pass += 1) {
    pending = await correctDrift(table, report, pending);
  }
  if (pending && pending.size > 0) {
    throw new Error(
      `usage of ${pending.size} account(s) kept changing during the recount; run it again: ${[...pending].join(', ')}`,
    );
  }
  return report;
}

async function countUncountedRecords(table: Table): Promise<number> {
  const records = await scanAll<FileItem>(table, {
    FilterExpression: 'sk = :file AND attribute_not_exists(usage_counted)',
    ExpressionAttributeValues: { ':file': 'file' },
  });
  let counted = 0;
  await inParallel(records, async (record) => {
    const counts = await table
      .transact([
        {
          Update: {
            Key: fileKey(record.id),
            UpdateExpression: 'SET usage_counted = :counted',
            ConditionExpression:
              'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(usage_counted)',
            ExpressionAttributeValues: { ':counted': true, ':owner': record.owner_id },
          },
        },
        {
          Update: {
            Key: usageKey(record.owner_id),
            UpdateExpression: 'SET account_id = :owner ADD used_bytes :bytes, file_count :one, rev :one',
            ExpressionAttributeValues: { ':owner': record.owner_id, ':bytes': record.size, ':one': 1 },
          },
        },
      ])
      // Deleted, or counted by a concurrent run, since the scan: nothing to count.
      .then(() => 1, conditionFailedReturns(0));
    counted += counts;
  });
  return counted;
}

/** One pass of step 2; answers the accounts whose usage moved while they were checked. */
async function correctDrift(
  table: Table,
  report: RecountReport,
  only: Set<string> | undefined,
): Promise<Set<string>> {
  // The usage first, then the records: a record written after its usage was read moved a `rev` (or made
  // a shard that was absent).
  const usages = await scanAll<UsageItem>(table, {
    FilterExpression: 'begins_with(pk, :usagePk) AND begins_with(sk, :usage)',
    ExpressionAttributeValues: { ':usagePk': 'usage#', ':usage': USAGE_SK },
  });
  const records = await scanAll<FileItem>(table, {
    FilterExpression: 'sk = :file AND usage_counted = :counted',
    ExpressionAttributeValues: { ':file': 'file', ':counted': true },
  });
  const sums = new Map<string, { used_bytes: number; file_count: number }>();
  for (const record of records) {
    const sum = sums.get(record.owner_id) ?? { used_bytes: 0, file_count: 0 };
    sum.used_bytes += record.size;
    sum.file_count += 1;
    sums.set(record.owner_id, sum);
  }
  const usageByAccount = new Map<string, UsageItem[]>();
  for (const usage of usages) {
    // By the partition key: whose usage an item is does not depend on an attribute it may lack.
    const accountId = usageAccountOf(usage.pk);
    usageByAccount.set(accountId, [...(usageByAccount.get(accountId) ?? []), usage]);
  }
  const accounts = [...new Set([...usageByAccount.keys(), ...sums.keys()])].filter(
    (id) => !only || only.has(id),
  );
  if (!only) report.accounts = accounts.length;
  const moved = new Set<string>();
  await inParallel(accounts, async (accountId) => {
    const items = usageByAccount.get(accountId) ?? [];
    const state = usageStateOf(accountId, items);
    const before = { used_bytes: state.usedBytes, file_count: state.fileCount };
    const after = sums.get(accountId) ?? { used_bytes: 0, file_count: 0 };
    if (before.used_bytes === after.used_bytes && before.file_count === after.file_count) return;
    const written = await table
      .transact(correction(accountId, items, after))
      .then(() => true, conditionFailedReturns(false));
    if (written) report.corrected.push({ account_id: accountId, before, after });
    else moved.add(accountId);
  });
  return moved;
}

/**
 * Sets the single usage item to the records' sums and folds the shards into it (each deleted), all
 * conditioned on every usage item of the account being as read: a shard absent then must still be absent.
 * The static token's buckets stay (their room holds its quota): the single item takes the rest.
 */
function correction(
  accountId: string,
  items: readonly UsageItem[],
  after: { used_bytes: number; file_count: number },
): TransactItem[] {
  const single = items.find((item) => item.sk === USAGE_SK);
  const revCondition = (rev: number | undefined) =>
    rev === undefined
      ? { ConditionExpression: 'attribute_not_exists(rev)' }
      : { ConditionExpression: 'rev = :rev', ExpressionAttributeValues: { ':rev': rev } };
  const keys = [
    ...Array.from({ length: USAGE_SHARDS }, (_, n) => slotKey(accountId, `${USAGE_SK}#${n}`)),
    ...SPREAD_SLOTS.map((slot) => slotKey(accountId, slot)),
  ];
  const kept = { used_bytes: 0, file_count: 0 };
  const shards = keys.map((key): TransactItem => {
    const read = items.find((item) => item.pk === key.pk && item.sk === key.sk);
    if (!read) return { ConditionCheck: { Key: key, ConditionExpression: 'attribute_not_exists(pk)' } };
    const condition = revCondition(read.rev);
    if (!isTokenItem(read)) return { Delete: { Key: key, ...condition } };
    kept.used_bytes += read.used_bytes ?? 0;
    kept.file_count += read.file_count ?? 0;
    return { ConditionCheck: { Key: key, ...condition } };
  });
  const condition = revCondition(single?.rev);
  return [
    {
      Update: {
        Key: usageKey(accountId),
        UpdateExpression: 'SET account_id = :account, used_bytes = :used, file_count = :files ADD rev :one',
        ConditionExpression: condition.ConditionExpression,
        ExpressionAttributeValues: {
          ':account': accountId,
          ':used': after.used_bytes - kept.used_bytes,
          ':files': after.file_count - kept.file_count,
          ':one': 1,
          ...(condition.ExpressionAttributeValues ?? {}),
        },
      },
    },
    ...shards,
  ];
}

/** Every item that passes the filter, read strongly consistently (`Table.scan`, for scripts like this one). */
async function scanAll<T extends Item>(table: Table, filter: Parameters<Table['scan']>[0]): Promise<T[]> {
  const items: T[] = [];
  for await (const page of table.scan<T>(filter)) items.push(...page);
  return items;
}

async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_WRITES, items.length) }, worker));
}
