// `npm run usage:recount` (lib/files/usage-recount.ts): files stored before quotas are counted, drift is
// corrected, a second run changes nothing, and uploads and deletes running alongside stay exact.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileKey } from '#lib/files/files.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { UsageRepository, usageKey } from '#lib/files/usage.ts';
import { recountUsage } from '#lib/files/usage-recount.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import {
  callHandler,
  deleteForGood,
  noisePng,
  storedUsage,
  uploadEvent,
  usageMatchesRecords,
} from './quota-helpers.ts';

let table: Table;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
});

const deps = () => testDeps({ defaultQuotaBytes: 10_000_000 });

/** Uploads files, then makes them look as they were before quotas: uncounted, no usage item. */
async function legacyFiles(account: TestAccount, sizes: number[]): Promise<UploadRecord[]> {
  const { handlers } = deps();
  const records: UploadRecord[] = [];
  for (const size of sizes) {
    const answer = await callHandler<UploadRecord>(
      handlers.files,
      uploadEvent(account.headers, noisePng(size)),
    );
    expect(answer.status).toBe(200);
    records.push(answer.body.data);
  }
  for (const record of records) {
    await table.update(fileKey(record.id), { UpdateExpression: 'REMOVE usage_counted' });
  }
  await table.delete(usageKey(account.account.id));
  return records;
}

describe('usage recount', () => {
  it('counts files stored before quotas, and a second run changes nothing', async () => {
    // Prepare
    const owner = await createTestAccount();
    const records = await legacyFiles(owner, [700, 900, 1100]);
    const total = records.reduce((sum, record) => sum + record.size, 0);

    // Act
    const first = await recountUsage(table);
    const afterFirst = await storedUsage(table, owner.account.id);
    const second = await recountUsage(table);

    // Assess
    expect(first.counted_files).toBeGreaterThanOrEqual(3);
    expect(afterFirst).toMatchObject({ used_bytes: total, file_count: 3 });
    expect(second).toMatchObject({ counted_files: 0, corrected: [] });
    expect(await storedUsage(table, owner.account.id)).toEqual(afterFirst);
    for (const record of records) expect((await table.get(fileKey(record.id)))?.usage_counted).toBe(true);
  });

  it('deleting a file stored before quotas never takes usage below zero (before the recount)', async () => {
    // Prepare
    const owner = await createTestAccount();
    const [old] = await legacyFiles(owner, [800]);
    const { handlers } = deps();
    const fresh = await callHandler<UploadRecord>(handlers.files, uploadEvent(owner.headers, noisePng(600)));

    // Act
    const deleted = await deleteForGood(handlers.files, old!.id, owner.headers);

    // Assess
    expect(deleted.status).toBe(200);
    expect(await usageMatchesRecords(table, owner.account.id)).toEqual({
      used_bytes: fresh.body.data.size,
      file_count: 1,
      record_bytes: fresh.body.data.size,
      record_count: 1,
    });
  });

  it('corrects counters that drifted from the records', async () => {
    // Prepare
    const owner = await createTestAccount();
    const { handlers } = deps();
    const file = await callHandler<UploadRecord>(handlers.files, uploadEvent(owner.headers, noisePng(900)));
    await table.update(usageKey(owner.account.id), {
      UpdateExpression: 'SET used_bytes = :wrong, file_count = :wrong',
      ExpressionAttributeValues: { ':wrong': 123_456 },
    });

    // Act
    const report = await recountUsage(table);

    // Assess
    expect(report.corrected).toContainEqual({
      account_id: owner.account.id,
      before: { used_bytes: 123_456, file_count: 123_456 },
      after: { used_bytes: file.body.data.size, file_count: 1 },
    });
    expect(await storedUsage(table, owner.account.id)).toMatchObject({
      used_bytes: file.body.data.size,
      file_count: 1,
    });
  });

  it("folds an administrator's usage shards into its single item when correcting, and deletes stay exact", async () => {
    // Prepare: an account without a quota counts its files over shards; its single item then drifts.
    const boss = await createTestAccount({ role: 'admin' });
    const { handlers } = deps();
    const files: UploadRecord[] = [];
    for (const size of [600, 700, 800, 900, 1000]) {
      const answer = await callHandler<UploadRecord>(
        handlers.files,
        uploadEvent(boss.headers, noisePng(size)),
      );
      files.push(answer.body.data);
    }
    const shardsBefore = (await new UsageRepository({ table }).items(boss.account.id)).filter(
      (item) => item.sk !== 'usage',
    );
    await table.update(usageKey(boss.account.id), {
      UpdateExpression: 'SET used_bytes = :wrong',
      ExpressionAttributeValues: { ':wrong': 5 },
    });

    // Act
    const report = await recountUsage(table);
    const itemsAfter = await new UsageRepository({ table }).items(boss.account.id);
    const deleted = await deleteForGood(handlers.files, files[0]!.id, boss.headers);

    // Assess
    expect(shardsBefore.length).toBeGreaterThan(1);
    expect(report.corrected.map((fix) => fix.account_id)).toContain(boss.account.id);
    expect(itemsAfter.map((item) => item.sk)).toEqual(['usage']);
    expect(deleted.status).toBe(200);
    const state = await usageMatchesRecords(table, boss.account.id);
    expect(state).toMatchObject({ record_count: 4, file_count: 4, used_bytes: state.record_bytes });
  });

  it('stays exact while uploads and deletes run alongside it', async () => {
    // Prepare
    const owner = await createTestAccount();
    const old = await legacyFiles(owner, [500, 600, 700, 800, 900, 1000]);
    const { handlers } = deps();

    // Act
    await Promise.all([
      recountUsage(table),
      ...Array.from({ length: 10 }, () =>
        callHandler(handlers.files, uploadEvent(owner.headers, noisePng(650))),
      ),
      ...old.slice(0, 3).map((record) => deleteForGood(handlers.files, record.id, owner.headers)),
    ]);
    await recountUsage(table);

    // Assess
    const state = await usageMatchesRecords(table, owner.account.id);
    expect(state.record_count).toBe(13);
    expect(state.used_bytes).toBe(state.record_bytes);
    expect(state.file_count).toBe(state.record_count);
  });

  it('runs as `npm run usage:recount` (scripts/recount-usage.ts) against the configured table', async () => {
    // Prepare
    const owner = await createTestAccount();
    const records = await legacyFiles(owner, [700]);

    // Act
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/recount-usage.ts'],
      {
        env: process.env,
      },
    );

    // Assess
    expect(stdout).toMatch(/Usage recounted in table test-\w+: \d+ account\(s\) checked/);
    expect(await storedUsage(table, owner.account.id)).toMatchObject({
      used_bytes: records[0]!.size,
      file_count: 1,
    });
  });
});
