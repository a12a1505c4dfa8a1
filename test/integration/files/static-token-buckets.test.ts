// The static upload token's quota and rate spread over items of their own (lib/files/usage-buckets.ts,
// Throttle.consumeSpread) stay exact: concurrent uploads never pass the quota, a deletion gives its room
// back, and no more requests are admitted than the burst, though each request takes one bucket of eight.
import { vi } from 'vitest';

const STATIC_TOKEN = vi.hoisted(() => {
  const token = 'static-upload-token-buckets-0001';
  process.env.UPLOAD__API_TOKEN = token;
  // Ten of this file's PNGs (74 bytes each) fit.
  process.env.UPLOAD__API_TOKEN_QUOTA_BYTES = '740';
  // A burst of 400 (eight buckets of 50), then nothing refills while this file runs.
  process.env.UPLOAD__API_TOKEN_RATE__PER_MINUTE = '1';
  process.env.UPLOAD__API_TOKEN_RATE__BURST = '400';
  return token;
});

import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, type CallResult, callUpload, uploadInput } from './helpers.ts';

const PNG_BYTES = 74;
let table: Table;
/** Every answer to a request made with the token (the rate counts them all). */
const answers: number[] = [];
let colour = 0;

/** A PNG of exactly PNG_BYTES bytes, never sent before. */
function png(): Buffer {
  for (;;) {
    colour += 1;
    const bytes = makePng(8, 8, [colour % 256, Math.floor(colour / 256) % 256, 77]);
    if (bytes.length === PNG_BYTES) return bytes;
  }
}

async function withToken<T>(input: Parameters<typeof callUpload>[0]): Promise<CallResult<T>> {
  const answer = await callUpload<T>(input);
  answers.push(answer.status);
  return answer;
}

const upload = (bytes: Buffer) => withToken<UploadRecord>(uploadInput(bearer(STATIC_TOKEN), { bytes }));
const usage = () =>
  withToken<{ used_bytes: number; file_count: number }>({
    path: '/api/v1/usage',
    headers: bearer(STATIC_TOKEN),
  });

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  await createTestAccount({ role: 'admin' });
});

describe('the static upload token’s spread quota and rate', () => {
  it('lands exactly 10 of 30 concurrent uploads against a quota of 10 files, and a deletion makes room for one more', async () => {
    // Act
    const first = await Promise.all(Array.from({ length: 30 }, () => upload(png())));
    const full = await usage();
    const landed = first.filter((answer) => answer.status === 200);
    // Deleted for good: to the trash, then out of it (docs/UPLOADS.md "Trash").
    await withToken({
      method: 'DELETE',
      path: `/api/v1/files/${landed[0]?.body.data.id}`,
      headers: bearer(STATIC_TOKEN),
    });
    const deleted = await withToken({
      method: 'DELETE',
      path: `/api/v1/files/trash/${landed[0]?.body.data.id}`,
      headers: bearer(STATIC_TOKEN),
    });
    const second = await Promise.all(Array.from({ length: 5 }, () => upload(png())));
    const after = await usage();

    // Assess
    expect(landed).toHaveLength(10);
    expect(first.filter((answer) => answer.status === 507)).toHaveLength(20);
    expect(full.body.data).toMatchObject({ used_bytes: 10 * PNG_BYTES, file_count: 10 });
    expect(deleted.status).toBe(200);
    expect(second.map((answer) => answer.status).sort()).toEqual([200, 507, 507, 507, 507]);
    expect(after.body.data).toMatchObject({ used_bytes: 10 * PNG_BYTES, file_count: 10 });
  });

  it('admits no more requests than the burst, over eight rate items', async () => {
    // Act: more at once than the burst has left.
    const burst = await Promise.all(Array.from({ length: 450 }, () => usage()));

    // Assess: the rest are 429 with Retry-After; every bucket took requests.
    const admitted = answers.filter((status) => status !== 429);
    expect(admitted.length).toBeLessThanOrEqual(400);
    expect(admitted.length).toBeGreaterThan(300);
    expect(burst.some((answer) => answer.status === 429)).toBe(true);
    for (const answer of burst.filter((one) => one.status === 429)) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
    const items = await table.getMany(
      Array.from({ length: 8 }, (_, n) => ({ pk: `throttle#static-upload-token#${n}`, sk: 'rate' })),
    );
    expect(items.every((item) => item !== undefined)).toBe(true);
    // 450 requests at once against DynamoDB Local took over 20 s in a full run on the shared 2-core machine.
  }, 120_000);
});
