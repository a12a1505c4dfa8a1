// The static upload.api_token (docs/DESIGN.md 5): uploads made with it belong to the first administrator;
// before any administrator exists it is refused with 503 and a message that says why.
import { vi } from 'vitest';

const STATIC_TOKEN = vi.hoisted(() => {
  const token = 'static-upload-token-for-tests-0001';
  process.env.UPLOAD__API_TOKEN = token;
  return token;
});

import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, callUpload, uniquePng, uploadInput } from './helpers.ts';

beforeAll(async () => {
  // The 503 below is logged as an operator error; keep the test output clean.
  configureLogging({ level: 'silent' });
  await provisionTestStack();
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

  it('is no session: it does not open session routes', async () => {
    expect((await callUpload({ path: '/api/v1/tokens', headers: bearer(STATIC_TOKEN) })).status).toBe(401);
  });

  it('must match exactly', async () => {
    const { status } = await callUpload(
      uploadInput(bearer(`${STATIC_TOKEN}x`), { bytes: uniquePng(makePng).bytes }),
    );
    expect(status).toBe(401);
  });
});
