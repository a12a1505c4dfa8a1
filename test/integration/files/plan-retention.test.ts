// A plan's default retention (docs/UPLOADS.md "Expiring uploads"): a buyer's upload that sets no expiry of its
// own expires `retention_days` after upload on every path (direct, API token, presign/confirm, the Lsky compat
// route); an explicit expiry always wins; accounts without such a plan, and administrators, get none.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { incomingKey } from '#lib/files/prefixes.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { buildMultipart } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callHandler, noisePng, uploadEvent } from './quota-helpers.ts';

const DAY_S = 24 * 60 * 60;
// Whole seconds, as the records keep their ends.
const clock = movableClock(Math.floor(Date.now() / 1000) * 1000);
const deps = testDeps({ clock });
const files = <T>(input: Parameters<typeof callHandler>[1]) => callHandler<T>(deps.handlers.files, input);
const payments = <T>(input: Parameters<typeof callHandler>[1]) =>
  callHandler<T>(deps.handlers.payments, input);

let admin: TestAccount;
let buyer: TestAccount;
let other: TestAccount;
let planId: string;

/** Epoch seconds of a record's `expires_at` (null: never), less the clock's now. */
const secondsLeft = (record: UploadRecord) =>
  record.expires_at === null ? null : (Date.parse(record.expires_at) - clock().getTime()) / 1000;

/** Places a mock order for the plan and pays it as the buyer. */
async function buy(account: TestAccount, id: string) {
  const order = await payments<{ id: string }>({
    method: 'POST',
    path: '/api/v1/orders',
    headers: account.headers,
    body: { plan_id: id, provider: 'mock' },
  });
  const paid = await payments({
    method: 'POST',
    path: `/api/v1/orders/${order.body.data.id}/pay`,
    headers: account.headers,
  });
  expect([order.status, paid.status]).toEqual([201, 200]);
}

/** A direct upload of a fresh PNG with these extra form fields. */
function upload(headers: Record<string, string>, fields: Record<string, string> = {}) {
  const { body, contentType } = buildMultipart([
    { name: 'file', filename: 'x.png', contentType: 'image/png', data: noisePng(400) },
    ...Object.entries(fields).map(([name, data]) => ({ name, data })),
  ]);
  return files<UploadRecord>({
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...headers, 'content-type': contentType, 'content-length': String(body.length) },
  });
}

/** Presign, PUT the bytes, move the clock on an hour, confirm: the confirmed record. */
async function presignAndConfirm(account: TestAccount, extra: Record<string, unknown> = {}) {
  const bytes = noisePng(400);
  const grant = await files<PresignResult>({
    method: 'POST',
    path: '/api/v1/upload/presign',
    headers: account.headers,
    body: { mime_type: 'image/png', size: bytes.length, ...extra },
  });
  expect(grant.status).toBe(200);
  await s3Client(config.aws).send(
    new PutObjectCommand({
      Bucket: config.bucket_name,
      Key: objectKeyOf(incomingKey(grant.body.data.key)),
      Body: bytes,
      ContentType: 'image/png',
    }),
  );
  const presignedAt = clock().getTime();
  clock.advance(60_000);
  const confirmed = await files<UploadRecord>({
    method: 'POST',
    path: '/api/v1/upload/confirm',
    headers: account.headers,
    body: { key: grant.body.data.key },
  });
  expect(confirmed.status).toBe(200);
  return { record: confirmed.body.data, presignedAt };
}

beforeAll(async () => {
  await provisionTestStack();
  [admin, buyer, other] = await Promise.all([
    createTestAccount({ role: 'admin' }),
    createTestAccount(),
    createTestAccount(),
  ]);
  const plan = await payments<{ id: string; retention_days: number | null }>({
    method: 'POST',
    path: '/api/v1/admin/plans',
    headers: admin.headers,
    body: { name: 'Short-lived', amount_cents: 990, quota_bytes: 10 * 1024 ** 2, retention_days: 1 },
  });
  expect(plan.status).toBe(201);
  expect(plan.body.data.retention_days).toBe(1);
  planId = plan.body.data.id;
  await buy(buyer, planId);
});

describe('a plan with retention_days', () => {
  it('makes a buyer’s upload without an expiry expire retention_days after upload', async () => {
    const answer = await upload(buyer.headers);
    const listed = await files<UploadRecord>({
      path: `/api/v1/files/${answer.body.data.id}`,
      headers: buyer.headers,
    });

    expect(answer.status).toBe(200);
    expect(secondsLeft(answer.body.data)).toBe(DAY_S);
    expect(listed.body.data.expires_at).toBe(answer.body.data.expires_at);
  });

  it('lets an explicit expiry win, shorter or longer than the plan’s', async () => {
    const shorter = await upload(buyer.headers, { expires_in: '60' });
    const at = new Date(Math.floor(clock().getTime() / 1000) * 1000 + 30 * DAY_S * 1000);
    const longer = await upload(buyer.headers, { expires_at: at.toISOString() });

    expect(secondsLeft(shorter.body.data)).toBe(60);
    expect(Date.parse(longer.body.data.expires_at!)).toBe(at.getTime());
  });

  it('applies to uploads with an API token and through the Lsky compat route', async () => {
    const { token } = await deps.uploads.tokens.create(buyer.account.id, 'retention test');
    const byToken = await files<UploadRecord>(
      uploadEvent({ authorization: `Bearer ${token}` }, noisePng(400)),
    );
    const { body, contentType } = buildMultipart([
      { name: 'file', filename: 'lsky.png', contentType: 'image/png', data: noisePng(400) },
    ]);
    const lsky = await files({
      method: 'POST',
      path: '/compat/lsky/api/v1/upload',
      body,
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json' },
    });
    const listed = await files<{ items: UploadRecord[] }>({ path: '/api/v1/files', headers: buyer.headers });
    const fromLsky = listed.body.data.items.find((item) => item.original_name === 'lsky.png');

    expect(byToken.status).toBe(200);
    expect(secondsLeft(byToken.body.data)).toBe(DAY_S);
    expect(lsky.status).toBe(200);
    expect(fromLsky && secondsLeft(fromLsky)).toBe(DAY_S);
  });

  it('fixes a presigned upload’s default at the presign; an explicit expires_in still wins', async () => {
    const plain = await presignAndConfirm(buyer);
    const explicit = await presignAndConfirm(buyer, { expires_in: 120 });

    expect(Date.parse(plain.record.expires_at!)).toBe(plain.presignedAt + DAY_S * 1000);
    expect(Date.parse(explicit.record.expires_at!)).toBe(explicit.presignedAt + 120_000);
  });

  it('gives no default to an account without such a plan, nor to an administrator', async () => {
    const plain = await upload(other.headers);
    const presigned = await presignAndConfirm(other);
    const byAdmin = await upload(admin.headers);

    expect(plain.status).toBe(200);
    expect(plain.body.data.expires_at).toBeNull();
    expect(presigned.record.expires_at).toBeNull();
    expect(byAdmin.body.data.expires_at).toBeNull();
  });
});

describe('the plan field', () => {
  it.each([0, 3651, 1.5, '7'])('refuses retention_days %s with 400 naming the field', async (value) => {
    const created = await payments({
      method: 'POST',
      path: '/api/v1/admin/plans',
      headers: admin.headers,
      body: { name: 'Bad', amount_cents: 990, retention_days: value },
    });
    const patched = await payments({
      method: 'PATCH',
      path: `/api/v1/admin/plans/${planId}`,
      headers: admin.headers,
      body: { retention_days: value },
    });

    expect([created.status, patched.status]).toEqual([400, 400]);
    expect(created.body.message).toMatch(/^retention_days: /);
    expect(patched.body.message).toMatch(/^retention_days: /);
  });

  it('is shown in the catalogue, changed and cleared with null', async () => {
    const changed = await payments<{ retention_days: number | null }>({
      method: 'PATCH',
      path: `/api/v1/admin/plans/${planId}`,
      headers: admin.headers,
      body: { retention_days: 3650 },
    });
    const listed = await payments<Array<{ id: string; retention_days: number | null }>>({
      path: '/api/v1/plans',
    });
    const cleared = await payments<{ retention_days: number | null }>({
      method: 'PATCH',
      path: `/api/v1/admin/plans/${planId}`,
      headers: admin.headers,
      body: { retention_days: null },
    });

    expect(changed.body.data.retention_days).toBe(3650);
    expect(listed.body.data.find((plan) => plan.id === planId)?.retention_days).toBe(3650);
    expect(cleared.body.data.retention_days).toBeNull();
  });
});

// Last: it moves the clock past the sessions' lifetime.
describe('after the grant ends', () => {
  it('stops applying once the grant has ended', async () => {
    const plan = await payments<{ id: string }>({
      method: 'POST',
      path: '/api/v1/admin/plans',
      headers: admin.headers,
      body: { name: 'Week', amount_cents: 990, quota_bytes: 1024 ** 2, duration_days: 7, retention_days: 30 },
    });
    const account = await createTestAccount();
    await buy(account, plan.body.data.id);
    const during = await upload(account.headers);
    const duringLeft = secondsLeft(during.body.data);
    clock.advance(8 * DAY_S * 1000);
    const { token } = await deps.uploads.tokens.create(account.account.id, 'after the grant');
    const after = await upload({ authorization: `Bearer ${token}` });

    expect(duringLeft).toBe(30 * DAY_S);
    expect(after.status).toBe(200);
    expect(after.body.data.expires_at).toBeNull();
  });
});
