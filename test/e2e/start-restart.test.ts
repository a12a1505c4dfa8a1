// `npm start` as a user runs it: starts its own stand-ins, serves the API, and keeps data across restarts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { buildMultipart, png } from '#test/support/images.ts';
import { startService } from '#test/support/start-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'service-start-'));
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  APP_CONFIG: 'infra/config/local.json',
  LOG__LEVEL: 'warn',
};

beforeAll(async () => {
  env.PORT = String(await freePort());
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function adminToken(url: string): Promise<string> {
  const login = await fetch(`${url}/admin/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'change-me-admin-1' }),
  });
  expect(login.status).toBe(200);
  return ((await login.json()) as { data: { token: string } }).data.token;
}

describe('npm start', () => {
  it('serves the API and keeps accounts, plans, files and the master key across a restart', {
    timeout: 120_000,
  }, async () => {
    const first = await startService(env);
    let fileUrl: string;
    try {
      expect(await (await fetch(`${first.url}/healthz`)).json()).toMatchObject({ code: 0, message: 'ok' });
      const token = await adminToken(first.url);
      const plan = await fetch(`${first.url}/api/v1/admin/plans`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: 'Kept plan', amount_cents: 500 }),
      });
      expect(plan.status).toBe(201);
      const form = buildMultipart([
        { name: 'file', filename: 'kept.png', contentType: 'image/png', data: png.bytes },
      ]);
      const upload = await fetch(`${first.url}/api/v1/upload`, {
        method: 'POST',
        headers: { 'content-type': form.contentType, authorization: 'Bearer local-dev-upload-token-0000' },
        body: form.body,
      });
      const uploaded = (await upload.json()) as { code: number; data: { url: string } };
      expect(uploaded.code).toBe(0);
      fileUrl = uploaded.data.url;
      // Links the service hands out name the port it listens on (base_url follows PORT locally).
      expect(fileUrl.startsWith(`${first.url}/i/`)).toBe(true);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const keyBefore = readFileSync(join(dataDir, 'master.key'), 'hex');

    const second = await startService(env);
    try {
      await adminToken(second.url); // the bootstrap administrator and the token signing key survived
      const plans = (await (await fetch(`${second.url}/api/v1/plans`)).json()) as {
        data: Array<{ name: string }>;
      };
      expect(plans.data.map((plan) => plan.name)).toContain('Kept plan');
      const file = await fetch(fileUrl);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(png.bytes);
      expect(readFileSync(join(dataDir, 'master.key'), 'hex')).toBe(keyBefore);
    } finally {
      await second.stop();
    }
  });

  it('stops with the config error, naming the key, when the config is bad', { timeout: 60_000 }, async () => {
    await expect(startService({ ...env, PORT: 'eighty' })).rejects.toThrow(/port: .*expected number/);
  });
});
