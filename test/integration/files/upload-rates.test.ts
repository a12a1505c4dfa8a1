// Upload rates per plan (docs/UPLOADS.md "Upload rates") against DynamoDB Local and s3rver: files and bytes a
// minute and a UTC day, 429 with Retry-After and the rate named past any of them; a plan's own rate; the
// presign counts (its confirm does not again); administrators have none. Time moves on a test clock.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { incomingKey } from '#lib/files/prefixes.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import { DAY_MS } from '#lib/files/quota-model.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { type AppConfig, config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { findOrphans } from '#test/support/faults.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callHandler, noisePng, recordsOf, uploadEvent } from './quota-helpers.ts';

type Rate = AppConfig['upload']['rate'];
const NO_RATE: Rate = { files_per_minute: 0, files_per_day: 0, bytes_per_minute: 0, bytes_per_day: 0 };

beforeAll(async () => {
  await provisionTestStack();
});

/** The service with `rate` (the rest of `upload.rate` off) on a clock the test moves, from `start`. */
function service(
  rate: Partial<Rate>,
  options: { start?: number; byPlan?: Record<string, Partial<Rate>> } = {},
) {
  const clock = movableClock(options.start);
  const deps = testDeps({
    clock,
    uploadRate: { ...NO_RATE, ...rate },
    ...(options.byPlan ? { uploadRateByPlan: options.byPlan } : {}),
  });
  const files = <T>(input: Parameters<typeof callHandler>[1]) => callHandler<T>(deps.handlers.files, input);
  /** A session issued on the service's clock, so it is still valid once the clock moved. */
  const headersOf = async (account: TestAccount) => {
    const { token } = await deps.sessions.issue(account.account);
    return { authorization: `Bearer ${token}` };
  };
  return {
    deps,
    clock,
    headersOf,
    upload: (headers: Record<string, string>, bytes = noisePng(300)) =>
      files<UploadRecord>(uploadEvent(headers, bytes)),
    presign: (headers: Record<string, string>, size: number) =>
      files<PresignResult>({
        method: 'POST',
        path: '/api/v1/upload/presign',
        headers,
        body: { mime_type: 'image/png', size, filename: 'big.png' },
      }),
    confirm: (headers: Record<string, string>, key: string) =>
      files<UploadRecord>({ method: 'POST', path: '/api/v1/upload/confirm', headers, body: { key } }),
    files,
  };
}

/** A time `offsetMs` into the UTC minute that starts a few minutes from now (a session issued on it holds). */
const minuteStart = (offsetMs: number) => Math.ceil(Date.now() / 60_000) * 60_000 + 2 * 60_000 + offsetMs;

describe('upload rates', () => {
  it('lets exactly files_per_minute of concurrent uploads through; the rest are 429 with Retry-After', async () => {
    // Prepare
    const s = service({ files_per_minute: 3 }, { start: minuteStart(15_000) });
    const user = await createTestAccount();
    const headers = await s.headersOf(user);

    // Act: eight uploads at once, 45 s before the minute ends
    const answers = await Promise.all(Array.from({ length: 8 }, () => s.upload(headers)));

    // Assess
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(refused.headers['retry-after']).toBe('45');
      expect(refused.body.message).toBe('Upload rate exceeded: at most 3 files per minute');
    }
    expect((await recordsOf(user.account.id)).count).toBe(3);
    // The refused uploads' bytes, stored while the table was asked, are deleted again.
    expect(await findOrphans()).toEqual([]);
  });

  it('frees the minute window once the minute is over', async () => {
    // Prepare
    const s = service({ files_per_minute: 2 }, { start: minuteStart(50_000) });
    const user = await createTestAccount();
    const headers = await s.headersOf(user);
    const first = [await s.upload(headers), await s.upload(headers)];
    const refused = await s.upload(headers);

    // Act
    s.clock.advance(9_000);
    const stillRefused = await s.upload(headers);
    s.clock.advance(1_000);
    const next = await s.upload(headers);

    // Assess
    expect(first.map((answer) => answer.status)).toEqual([200, 200]);
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '10']);
    expect([stillRefused.status, stillRefused.headers['retry-after']]).toEqual([429, '1']);
    expect(next.status).toBe(200);
  });

  it('holds bytes_per_day until the next UTC day, and refuses a file larger than the rate with 413', async () => {
    // Prepare: an hour before a UTC midnight
    const midnight = Math.ceil(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
    const s = service({ bytes_per_day: 2000 }, { start: midnight - 3_600_000 });
    const user = await createTestAccount();
    const headers = await s.headersOf(user);
    const [a, b] = [noisePng(900), noisePng(900)];

    // Act
    const kept = [await s.upload(headers, a), await s.upload(headers, b)];
    const over = await s.upload(headers, noisePng(400));
    const huge = await s.upload(headers, noisePng(2500));
    s.clock.set(midnight);
    const nextDay = await s.upload(headers, noisePng(900));

    // Assess
    expect(a.length + b.length).toBeLessThanOrEqual(2000);
    expect(kept.map((answer) => answer.status)).toEqual([200, 200]);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('3600');
    expect(over.body.message).toBe('Upload rate exceeded: at most 2000 bytes per day');
    expect(huge.status).toBe(413);
    expect(huge.body.message).toBe('file: larger than the upload rate of 2000 bytes per day');
    expect(nextDay.status).toBe(200);
    expect((await recordsOf(user.account.id)).count).toBe(3);
  });

  it('applies the rate of the plan an account holds instead of the default', async () => {
    // Prepare: a plan created and bought through a service without rates, then one with them
    const admin = await createTestAccount({ role: 'admin' });
    const setup = testDeps();
    const plan = await callHandler<{ id: string }>(setup.handlers.payments, {
      method: 'POST',
      path: '/api/v1/admin/plans',
      headers: admin.headers,
      body: { name: 'Busy', amount_cents: 990, quota_bytes: 10 ** 9, duration_days: 30 },
    });
    const buyer = await createTestAccount();
    const order = await callHandler<{ id: string }>(setup.handlers.payments, {
      method: 'POST',
      path: '/api/v1/orders',
      headers: buyer.headers,
      body: { plan_id: plan.body.data.id, provider: 'mock' },
    });
    const paid = await callHandler(setup.handlers.payments, {
      method: 'POST',
      path: `/api/v1/orders/${order.body.data.id}/pay`,
      headers: buyer.headers,
    });
    expect(paid.status).toBe(200);
    const s = service(
      { files_per_minute: 1 },
      { start: minuteStart(0), byPlan: { [plan.body.data.id]: { files_per_minute: 3 } } },
    );
    const other = await createTestAccount();

    // Act
    const buyerHeaders = await s.headersOf(buyer);
    const otherHeaders = await s.headersOf(other);
    const byBuyer = [];
    for (let n = 0; n < 4; n++) byBuyer.push(await s.upload(buyerHeaders));
    const byOther = [await s.upload(otherHeaders), await s.upload(otherHeaders)];

    // Assess
    expect(byBuyer.map((answer) => answer.status)).toEqual([200, 200, 200, 429]);
    expect(byBuyer[3]?.body.message).toBe('Upload rate exceeded: at most 3 files per minute');
    expect(byOther.map((answer) => answer.status)).toEqual([200, 429]);
    expect(byOther[1]?.body.message).toBe('Upload rate exceeded: at most 1 files per minute');
  });

  it('counts a presign (its declared size) and not its confirm; a direct upload shares the count', async () => {
    // Prepare
    const s = service({ files_per_minute: 2, bytes_per_minute: 5000 }, { start: minuteStart(30_000) });
    const user = await createTestAccount();
    const headers = await s.headersOf(user);
    const bytes = noisePng(1500);

    // Act
    const first = await s.presign(headers, bytes.length);
    const second = await s.presign(headers, 1000);
    const third = await s.presign(headers, 1000);
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(incomingKey(first.body.data.key)),
        Body: bytes,
        ContentType: 'image/png',
      }),
    );
    const confirmed = await s.confirm(headers, first.body.data.key);
    const direct = await s.upload(headers);

    // Assess
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('30');
    expect(third.body.message).toBe('Upload rate exceeded: at most 2 files per minute');
    expect(confirmed.status).toBe(200);
    expect(direct.status).toBe(429);
  });

  it('names the bytes rate when a presign’s declared size passes it', async () => {
    // Prepare
    const s = service({ bytes_per_minute: 5000 }, { start: minuteStart(0) });
    const headers = await s.headersOf(await createTestAccount());

    // Act
    const fits = await s.presign(headers, 3000);
    const over = await s.presign(headers, 2001);

    // Assess
    expect(fits.status).toBe(200);
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('60');
    expect(over.body.message).toBe('Upload rate exceeded: at most 5000 bytes per minute');
  });

  it('gives administrators no rate', async () => {
    // Prepare
    const s = service({ files_per_minute: 1, files_per_day: 1 }, { start: minuteStart(0) });
    const headers = await s.headersOf(await createTestAccount({ role: 'admin' }));

    // Act
    const answers = [await s.upload(headers), await s.upload(headers), await s.upload(headers)];
    const presigned = await s.presign(headers, 1000);

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(presigned.status).toBe(200);
  });
});
