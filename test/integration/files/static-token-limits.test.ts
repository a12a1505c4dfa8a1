// The static upload.api_token has a storage quota and a rate of its own (docs/UPLOADS.md "The static
// upload token"): past the quota its uploads and presigns are the project's 507, past the rate 429 with Retry-After,
// and concurrent requests never get more than the rate admits.
import { vi } from 'vitest';

const STATIC_TOKEN = vi.hoisted(() => {
  const token = 'static-upload-token-limits-0001';
  process.env.UPLOAD__API_TOKEN = token;
  // Three of the test's PNGs (20x20 of one random colour: 82 to 84 bytes each) fit; a fourth never does.
  // (PNGs of random sizes were 73 to 98 bytes: four small ones fit, about one run in twelve.)
  process.env.UPLOAD__API_TOKEN_QUOTA_BYTES = '300';
  // A burst of 10, then one a minute: nothing refills while this file runs.
  process.env.UPLOAD__API_TOKEN_RATE__PER_MINUTE = '1';
  process.env.UPLOAD__API_TOKEN_RATE__BURST = '10';
  return token;
});

import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, callUpload, uploadInput } from './helpers.ts';

const randomByte = () => Math.floor(Math.random() * 256);
const upload = () =>
  callUpload(
    uploadInput(bearer(STATIC_TOKEN), { bytes: makePng(20, 20, [randomByte(), randomByte(), randomByte()]) }),
  );

beforeAll(async () => {
  await provisionTestStack();
  // The token's owner: an administrator, who has no quota of its own.
  await createTestAccount({ role: 'admin' });
});

describe('the static upload token’s quota and rate', () => {
  it('refuses an upload past its own quota with 507, though its owner has none', async () => {
    // Act: four uploads and a presign, one after the other (five of the burst's ten).
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await upload()).status);
    const over = await upload();
    const presigned = await callUpload({
      method: 'POST',
      path: '/api/v1/upload/presign',
      body: { mime_type: 'image/png', size: 100, filename: 'big.png' },
      headers: bearer(STATIC_TOKEN),
    });
    const usage = await callUpload<{ used_bytes: number; file_count: number; quota_bytes: number }>({
      path: '/api/v1/usage',
      headers: bearer(STATIC_TOKEN),
    });

    // Assess
    expect(statuses).toEqual([200, 200, 200]);
    expect(over.status).toBe(507);
    expect(over.body.message).toMatch(/storage/i);
    // A presign's declared size is held against the same quota.
    expect(presigned.status).toBe(507);
    expect(usage.body.data).toMatchObject({ file_count: 3, quota_bytes: 300 });
    expect(usage.body.data.used_bytes).toBeLessThanOrEqual(300);
  });

  it('admits concurrent requests only as far as its rate: the rest are 429 with Retry-After', async () => {
    // Act: 20 at once; the burst has 10 - 6 = 4 left (the first test's 4 uploads, presign and usage read),
    // and nothing refills.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => callUpload({ path: '/api/v1/usage', headers: bearer(STATIC_TOKEN) })),
    );

    // Assess
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.length - refused.length).toBe(4);
    for (const answer of answers) expect([200, 429]).toContain(answer.status);
    for (const answer of refused) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(answer.body.message).toBe('Too many uploads with the static token');
    }
    const later = await upload();
    expect(later.status).toBe(429);
  });
});
