// The bandwidth worker over DynamoDB Local and s3rver (lib/files/bandwidth-meter.ts, docs/UPLOADS.md
// "Bandwidth"): a CDN log object counts once however many runs read it at once; the 80 % and 100 % notices
// are mailed once each; past the cap plus grace the owner's files are stopped, and served again at the
// month's turn; another owner is untouched.
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatCdnLog } from '#lib/files/cdn-log.ts';
import type { AccessLogStore } from '#lib/platform/storage/access-logs.ts';
import { accessLogsOf } from '#lib/wiring/access-logs.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { lambdaContext } from '#test/support/events.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callHandler, noisePng, uploadEvent } from './quota-helpers.ts';

const clock = movableClock();
const deps = testDeps({ clock, bandwidthDefaultBytes: 1000 });
const logs: AccessLogStore = accessLogsOf(testResources('bandwidth', { accessLogs: true }));
const run = () => deps.handlers.bandwidth({}, lambdaContext as Context);

/** The path of a file `who` uploaded (its key carries their tag). */
async function uploadedPath(who: TestAccount): Promise<string> {
  const answer = await callHandler<{ url: string }>(
    deps.handlers.files,
    uploadEvent(who.headers, noisePng(200 + Math.floor(Math.random() * 100))),
  );
  expect(answer.status).toBe(200);
  return new URL(answer.body.data!.url).pathname;
}

/** One CDN log object: `bytes` served of `path` now. */
async function served(path: string, bytes: number): Promise<void> {
  const now = clock().toISOString();
  const text = formatCdnLog([
    {
      date: now.slice(0, 10),
      time: now.slice(11, 19),
      'sc-bytes': String(bytes),
      'cs-uri-stem': path,
      'sc-status': '200',
    },
  ]);
  await logs.write(`cdn/TEST.${now.slice(0, 13)}.${crypto.randomUUID()}.gz`, text);
}

const usedBy = async (who: TestAccount) =>
  (await deps.groups.files.bandwidth.viewOf({ id: who.account.id, role: 'user' })).bandwidth_bytes_used;
const stopped = async (who: TestAccount) => (await deps.uploads.ownerRules.read(who.account.id)).stopped;
const notices = (who: TestAccount) => deps.mail.to(who.account.email!).map((mail) => mail.subject);

let owner: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [owner, other] = await Promise.all([createTestAccount(), createTestAccount()]);
});

describe('the bandwidth worker', () => {
  it('counts a log object once when runs read it at once, and never again', async () => {
    const path = await uploadedPath(other);
    await served(path, 120);

    const runs = await Promise.all([run(), run(), run(), run()]);
    const later = await run();

    expect(runs.reduce((sum, each) => sum + each.objects, 0)).toBe(1);
    expect(later.objects).toBe(0);
    expect(await usedBy(other)).toBe(120);
  });

  it('mails each notice once, stops past the cap plus grace, and serves again at the month turn', async () => {
    // Prepare: a cap of 1000 bytes (bandwidth.default_bytes), grace 10 %.
    const path = await uploadedPath(owner);

    // Act and assess, step by step.
    await served(path, 850);
    await run();
    await run();
    expect(notices(owner)).toEqual(["Bandwidth: 80 % of this month's used"]);

    await served(path, 200);
    await run();
    expect(notices(owner)).toHaveLength(2);
    expect(notices(owner)[1]).toBe("Bandwidth: 100 % of this month's used");
    expect(await stopped(owner)).toBeUndefined();

    await served(path, 100);
    const over = await run();
    expect(over.stopped).toBe(1);
    expect(await stopped(owner)).toBe('bandwidth');
    expect(await stopped(other)).toBeUndefined();
    expect(notices(owner)).toHaveLength(2);

    const now = clock();
    clock.set(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 1));
    const turned = await run();
    expect(turned.resumed).toBe(1);
    expect(await stopped(owner)).toBeUndefined();
    expect(await usedBy(owner)).toBe(0);
  });
});
