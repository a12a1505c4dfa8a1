// Moderation through the local server as npm start runs it (infra/local/app.ts): the table's stream on
// DynamoDB Local feeds the moderation worker in its own process, with only its needs' environment and this
// deployment's policy (everything held until reviewed); the held file then answers 451 at the local edge,
// renditions included, and through its share, and 200 to its owner through the content route; approved,
// it is served again.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { HELD_MESSAGE } from '#lib/files/moderation-state.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { buildMultipart } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { drawing } from '#test/support/moderation-images.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let worker: FunctionProcess | undefined;
afterAll(() => worker?.stop());

const app = useLocalApp(async () => {
  // The worker as npm start runs it, under a policy that holds everything (hold_above 0).
  worker = await startFunctionProcess({
    name: 'moderation',
    host: `${ROOT}infra/local/function-host.ts`,
    module: `${ROOT}functions/moderation/handler.ts`,
    env: localFunctionEnvironment('moderation', {
      ...config,
      moderation: { ...config.moderation, hold_above: 0 },
    }),
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    output: () => {},
    startTimeoutMs: 60_000,
  });
  return { functions: new Map([['moderation', worker]]) };
}, 90_000);

/** Polls the owner's record until the worker has written its moderation. */
async function classified(id: string, token: string): Promise<{ state: string }> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    const record = await app.api('GET', `/api/v1/files/${id}`, { token });
    if (record.data.moderation) return record.data.moderation;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the moderation worker never classified the file');
}

describe('moderation under the local server', () => {
  it('holds a new file from the stream: 451 at the edge and through its share, 200 to its owner; approved, served', async () => {
    const [owner, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
    const form = buildMultipart([
      { name: 'file', filename: 'a.png', contentType: 'image/png', data: await drawing(91) },
      { name: 'permission', data: 'public' },
    ]);
    const uploaded = await app.api('POST', '/api/v1/upload', {
      token: owner.token,
      body: form.body,
      headers: { 'content-type': form.contentType },
    });
    expect(uploaded.code).toBe(0);
    const { id, key } = uploaded.data;
    const share = await app.api('POST', '/api/v1/shares', { token: owner.token, body: { file_id: id } });

    expect((await classified(id, owner.token)).state).toBe('held');

    for (const query of ['', '?w=480&f=webp', '?p=thumb']) {
      const answer = await app.request('GET', `/i/${key}${query}`);
      expect(answer.status, query).toBe(451);
      expect(answer.raw).toBe(HELD_MESSAGE);
    }
    expect((await app.request('GET', `/s/${share.data.id}`)).status).toBe(451);
    const content = await app.request('GET', `/api/v1/files/${id}/content`, { token: owner.token });
    expect(content.status).toBe(200);
    expect(content.headers.get('cache-control')).toBe('private, no-store');

    const approved = await app.api('POST', `/api/v1/admin/moderation/${id}`, {
      token: admin.token,
      body: { action: 'approve' },
    });
    expect(approved.data.moderation).toMatchObject({ state: 'published', reviewed: true });
    expect((await app.request('GET', `/i/${key}`)).status).toBe(200);
    expect((await app.request('GET', `/s/${share.data.id}`)).status).toBe(200);
  }, 90_000);
});
