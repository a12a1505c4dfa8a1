// Bandwidth capped per plan, as an owner meets it through the local server playing the CDN (docs/UPLOADS.md
// "Bandwidth"): the server writes CloudFront-format logs of every /i/ answer to the access-log bucket; the
// bandwidth worker, in its own process as npm start runs it and mailing through the SES stand-in, counts
// them, mails the 80 % and 100 % notices once, stops the owner's files past the cap plus grace (403), and
// serves them again once the owner buys a plan with a bigger cap.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ses = await vi.hoisted(async () => {
  const { startSesStandIn: start } = await import('#test/support/mail.ts');
  const standIn = await start();
  process.env.MAIL__FROM = 'noreply@example.test';
  process.env.AWS__SES_ENDPOINT = standIn.endpoint;
  return standIn;
});

import { fileURLToPath } from 'node:url';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import type { BandwidthRun } from '#lib/files/bandwidth-meter.ts';
import { config } from '#lib/platform/config/index.ts';
import { noisePng } from '#test/integration/files/quota-helpers.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
afterAll(() => ses.close());
const app = useLocalApp();
let admin: TestAccount;
let owner: TestAccount;
let workerProcess: FunctionProcess | undefined;

beforeAll(async () => {
  [admin, owner] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  // The worker as npm start runs it: its own process, only its needs' environment.
  workerProcess = await startFunctionProcess({
    name: 'bandwidth',
    host: `${ROOT}infra/local/function-host.ts`,
    module: `${ROOT}functions/bandwidth/handler.ts`,
    env: localFunctionEnvironment('bandwidth', config),
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    output: () => {},
    startTimeoutMs: 60_000,
  });
}, 90_000);
afterAll(() => workerProcess?.stop());

/** One scheduled run of the worker. */
const worker = async () =>
  (await workerProcess!.invoke({
    source: 'aws.events',
    'detail-type': 'Scheduled Event',
  } as never)) as BandwidthRun;

const api = (method: string, path: string, who: TestAccount, body?: object) =>
  app.api(method, path, { headers: who.headers, body });

async function buy(bandwidthBytes: number): Promise<void> {
  const plan = await api('POST', '/api/v1/admin/plans', admin, {
    name: `Bandwidth ${bandwidthBytes}`,
    amount_cents: 500,
    quota_bytes: 10_000_000,
    bandwidth_bytes: bandwidthBytes,
    duration_days: 30,
  });
  const listed = await api('GET', '/api/v1/plans', owner);
  expect(listed.data.find((each: { id: string }) => each.id === plan.data.id)).toMatchObject({
    bandwidth_bytes: bandwidthBytes,
  });
  const order = await api('POST', '/api/v1/orders', owner, { plan_id: plan.data.id, provider: 'mock' });
  expect((await fetch(app.at(order.data.pay_url), { method: 'POST' })).status).toBe(200);
}

/** Runs the worker until the month's count reaches `bytes` (the server writes its logs each second). */
async function countedUpTo(bytes: number) {
  for (let attempt = 0; attempt < 50; attempt++) {
    await worker();
    const usage = await api('GET', '/api/v1/usage', owner);
    if (usage.data.bandwidth_bytes_used >= bytes) return usage.data;
    await new Promise((wait) => setTimeout(wait, 200));
  }
  throw new Error(`the worker never counted ${bytes} bytes`);
}

describe("an owner's monthly bandwidth", () => {
  it('is counted from the CDN logs, noticed at 80 % and 100 %, stopped past the grace, resumed by an upgrade', async () => {
    // Prepare: a plan of 3000 bytes a month and one file of about 1500 bytes.
    await buy(3000);
    const form = new FormData();
    form.append('file', new Blob([noisePng(1500)], { type: 'image/png' }), 'served.png');
    const uploaded = await app.request('POST', '/api/v1/upload', { headers: owner.headers, body: form });
    const path = new URL((uploaded.body as { data: { url: string } }).data.url).pathname;
    const size = (uploaded.body as { data: { size: number } }).data.size;

    // Act: served twice (at or past 80 % and 100 % but within the grace), then a third time (past it).
    expect((await fetch(`${app.url}${path}`)).status).toBe(200);
    expect((await fetch(`${app.url}${path}`)).status).toBe(200);
    const atCap = await countedUpTo(2 * size);
    await worker();
    const servedAtCap = await fetch(`${app.url}${path}`);
    const past = await countedUpTo(3 * size);
    const refused = await fetch(`${app.url}${path}`);
    await buy(1_000_000);
    const run = await worker();
    const again = await fetch(`${app.url}${path}`);

    // Assess
    expect(atCap).toMatchObject({ bandwidth_bytes: 3000 });
    expect(servedAtCap.status).toBe(200);
    expect(past.bandwidth_bytes_used).toBe(3 * size);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toMatch(/bandwidth/);
    expect(run.resumed).toBe(1);
    expect(again.status).toBe(200);
    const notices = (await ses.mails()).filter((mail) => mail.to === owner.account.email);
    expect(notices.map((mail) => mail.subject).sort()).toEqual([
      "Bandwidth: 100 % of this month's used",
      "Bandwidth: 80 % of this month's used",
    ]);
  });
});
