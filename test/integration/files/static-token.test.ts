// The static upload.api_token (docs/DESIGN.md 5): uploads made with it belong to the first administrator;
// before any administrator exists it is refused with 503 and a message that says why.
import { vi } from 'vitest';

const STATIC_TOKEN = vi.hoisted(() => {
  const token = 'static-upload-token-for-tests-0001';
  process.env.UPLOAD__API_TOKEN = token;
  return token;
});

import { beforeAll, describe, expect, it } from 'vitest';
import { fileKey } from '#lib/files/files.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { UsageRepository, usageStateOf } from '#lib/files/usage.ts';
import { tokenItems } from '#lib/files/usage-buckets.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, callUpload, uniquePng, uploadInput } from './helpers.ts';
import { recordsOf } from './quota-helpers.ts';

let table: Table;

beforeAll(async () => {
  // The 503 below is logged as an operator error; keep the test output clean.
  configureLogging({ level: 'silent' });
  ({ table } = await provisionTestStack());
});

describe('the static upload token', () => {
  it('is 503 with a clear message while no administrator exists, then uploads as the first administrator', async () => {
    // Prepare: this file's table starts without accounts.
    const early = await callUpload(uploadInput(bearer(STATIC_TOKEN), { bytes: uniquePng(makePng).bytes }));
    const firstAdmin = await createTestAccount({ role: 'admin' });
    await createTestAccount({ role: 'admin' });

    // Act
    const uploaded = await callUpload<UploadRecord>(
      uploadInput(bearer(STATIC_TOKEN), { bytes: uniquePng(makePng).bytes }),
    );

    // Assess
    expect(early.status).toBe(503);
    expect(early.body.message).toMatch(/no owner yet.*first administrator/);
    expect(uploaded.status).toBe(200);
    const adminFiles = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: firstAdmin.headers,
    });
    expect(adminFiles.body.data.items.map((item) => item.id)).toEqual([uploaded.body.data.id]);
    const viaToken = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: bearer(STATIC_TOKEN),
    });
    expect(viaToken.body.data.items.map((item) => item.id)).toEqual([uploaded.body.data.id]);
  });

  it('is no session: it does not open session routes, nor the back office (docs/UPLOADS.md)', async () => {
    expect((await callUpload({ path: '/api/v1/tokens', headers: bearer(STATIC_TOKEN) })).status).toBe(401);
    // It acts as the first administrator on the upload and file routes only: everyone's files take a session.
    for (const [method, path] of [
      ['GET', '/api/v1/admin/files'],
      ['PATCH', '/api/v1/admin/files/00000000-0000-4000-8000-000000000000'],
      ['DELETE', '/api/v1/admin/files/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const answer = await callUpload({ method, path, headers: bearer(STATIC_TOKEN), body: {} });
      expect(answer.status, `${method} ${path}`).toBe(401);
    }
  });

  it('must match exactly', async () => {
    const { status } = await callUpload(
      uploadInput(bearer(`${STATIC_TOKEN}x`), { bytes: uniquePng(makePng).bytes }),
    );
    expect(status).toBe(401);
  });

  it('takes 40 concurrent uploads, each counted against its own quota exactly, spread over its usage buckets', async () => {
    // Prepare: an administrator owns the token (the first one, if an earlier test made one already).
    await createTestAccount({ role: 'admin' });
    const pngs = Array.from({ length: 40 }, () => uniquePng(makePng).bytes);

    // Act
    const answers = await Promise.all(
      pngs.map((bytes) => callUpload<UploadRecord>(uploadInput(bearer(STATIC_TOKEN), { bytes }))),
    );
    const usage = await callUpload<{ used_bytes: number; file_count: number; quota_bytes: number | null }>({
      path: '/api/v1/usage',
      headers: bearer(STATIC_TOKEN),
    });

    // Assess: the token's buckets (each its own partition key) count its uploads; the owner's own uploads
    // stay in its shards.
    expect(answers.map((answer) => answer.status)).toEqual(pngs.map(() => 200));
    const ownerId = String((await table.get(fileKey(answers[0]!.body.data.id)))?.owner_id);
    const items = tokenItems(await new UsageRepository({ table }).items(ownerId));
    const stored = await recordsOf(ownerId);
    expect(stored.count).toBeGreaterThanOrEqual(40);
    expect(usageStateOf(ownerId, items)).toMatchObject({ usedBytes: stored.bytes, fileCount: stored.count });
    const used = items.filter((item) => (item.file_count ?? 0) > 0);
    expect(new Set(used.map((item) => item.pk)).size).toBeGreaterThan(1);
    expect(Math.max(...used.map((item) => item.file_count ?? 0))).toBeLessThan(40);
    expect(usage.body.data).toEqual({
      used_bytes: stored.bytes,
      file_count: stored.count,
      quota_bytes: config.upload.api_token_quota_bytes,
      plan: null,
      bandwidth_bytes_used: 0,
      bandwidth_bytes: null,
    });
  });
});
