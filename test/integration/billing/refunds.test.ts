// Refunds (docs/DESIGN.md 17): an administrator refunds a paid order in full or in part with an
// Idempotency-Key (the same key refunds once, also 20 at once); a refund larger than what is left is 400; a
// full refund sets `refunded`, takes back exactly what the order granted, publishes order.refunded through
// the outbox and mails the buyer; the buyer's history shows the refunds.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { captureLog } from './helpers.ts';
import { grantOf } from './reconcile-support.ts';

const log = captureLog();
const mail = memoryMailer();
let deps: ReturnType<typeof testDeps>;
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
const DAY_MS = 86_400_000;

async function call(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: object },
) {
  const result = await deps.handlers.payments(
    apiEvent({
      method,
      path,
      headers: options.headers ?? {},
      ...(options.body ? { body: options.body } : {}),
    }),
    lambdaContext,
  );
  // biome-ignore lint/suspicious/noExplicitAny: test convenience over the envelope's data
  return { status: result.statusCode ?? 0, json: JSON.parse(result.body ?? '{}') as any };
}

async function plan(body: Record<string, unknown>): Promise<string> {
  const answer = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Refund plan', amount_cents: 1000, quota_bytes: 8 * 1024 ** 2, duration_days: 30, ...body },
  });
  expect(answer.status).toBe(201);
  return answer.json.data.id;
}

/** A mock order of `planId`, paid by its owner. */
async function paidOrder(who: TestAccount, planId: string): Promise<string> {
  const placed = await call('POST', '/api/v1/orders', {
    headers: who.headers,
    body: { plan_id: planId, provider: 'mock' },
  });
  expect(placed.status).toBe(201);
  const paid = await call('POST', `/api/v1/orders/${placed.json.data.id}/pay`, { headers: who.headers });
  expect(paid.json.data.status).toBe('paid');
  return placed.json.data.id;
}

const refund = (id: string, body: object, key: string | null = randomUUID(), who = admin) =>
  call('POST', `/api/v1/admin/orders/${id}/refund`, {
    headers: { ...who.headers, ...(key === null ? {} : { 'idempotency-key': key }) },
    body,
  });

async function refundedEvents(orderId: string): Promise<number> {
  await deps.drainOutbox();
  return log.filter(
    (line) =>
      line.message === 'event' &&
      line.event === 'order.refunded' &&
      (line.detail as { order_id?: string })?.order_id === orderId,
  ).length;
}

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  deps = testDeps({ mailer: mail });
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
});

describe('refunds', () => {
  it('refunds in part, then the rest: refunded, grant taken back, one order.refunded, the buyer told', async () => {
    // Prepare: a permanent plan (its whole grant goes with a full refund).
    const user = await createTestAccount();
    const id = await paidOrder(user, await plan({ duration_days: 0 }));
    expect(await grantOf(table, user.account.id)).toBeDefined();

    // Act
    const part = await refund(id, { amount_cents: 300, reason: 'partly unhappy' });
    const rest = await refund(id, { reason: 'gave up' });

    // Assess
    expect(part.status).toBe(200);
    expect(part.json.data).toMatchObject({ status: 'paid', refunded_cents: 300 });
    expect(part.json.data.refunds).toEqual([
      expect.objectContaining({ amount_cents: 300, reason: 'partly unhappy', status: 'succeeded' }),
    ]);
    expect(rest.json.data).toMatchObject({ status: 'refunded', refunded_cents: 1000 });
    expect(rest.json.data.refunds.map((item: { amount_cents: number }) => item.amount_cents)).toEqual([
      300, 700,
    ]);
    expect(await grantOf(table, user.account.id)).toBeUndefined();
    expect(await refundedEvents(id)).toBe(1);
    const notices = mail.to(user.account.email!);
    expect(notices.map((notice) => notice.subject)).toEqual([
      'Your order was refunded',
      'Your order was refunded',
    ]);
    expect(notices[1]!.text).toContain('refunded in full');
    // The buyer's history shows it.
    const history = await call('GET', '/api/v1/orders?limit=100', { headers: user.headers });
    expect(history.json.data.items.find((item: { id: string }) => item.id === id)).toMatchObject({
      status: 'refunded',
      refunded_cents: 1000,
    });
  });

  it('takes back exactly the days the order added to its plan', async () => {
    // Prepare: two 30-day purchases of one plan: 60 days.
    const user = await createTestAccount();
    const planId = await plan({});
    const first = await paidOrder(user, planId);
    await paidOrder(user, planId);
    const before = (await grantOf(table, user.account.id))!;

    // Act
    const answer = await refund(first, { reason: 'one month back' });

    // Assess
    expect(answer.json.data.status).toBe('refunded');
    const after = (await grantOf(table, user.account.id))!;
    expect(before.ends_ms! - after.ends_ms!).toBe(30 * DAY_MS);
    expect(after.ends_ms! - Date.now()).toBeGreaterThan(29 * DAY_MS);
  });

  it('refunds once for 20 concurrent calls with one Idempotency-Key, all answering the same', async () => {
    const user = await createTestAccount();
    const id = await paidOrder(user, await plan({}));
    const key = randomUUID();

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => refund(id, { amount_cents: 400, reason: 'twenty clicks' }, key)),
    );

    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    for (const answer of answers) {
      expect(answer.json.data.refunded_cents).toBe(400);
      expect(answer.json.data.refunds).toHaveLength(1);
    }
    const stored = await call('GET', `/api/v1/orders/${id}`, { headers: user.headers });
    expect(stored.json.data.refunded_cents).toBe(400);
    expect(mail.to(user.account.email!)).toHaveLength(1);
  });

  it('refuses the same key for another refund (409) and a key that is no key (400)', async () => {
    const id = await paidOrder(buyer, await plan({}));
    const key = randomUUID();
    expect((await refund(id, { amount_cents: 100, reason: 'first' }, key)).status).toBe(200);

    const otherAmount = await refund(id, { amount_cents: 200, reason: 'first' }, key);
    const missing = await refund(id, { reason: 'no key' }, null);
    const malformed = await refund(id, { reason: 'bad key' }, 'spaces are not allowed');

    expect(otherAmount.status).toBe(409);
    expect(missing.status).toBe(400);
    expect(missing.json.message).toMatch(/^Idempotency-Key:/);
    expect(malformed.status).toBe(400);
  });

  it('refuses more than what is left (400), an unpaid order (409), a user (403), an unknown order (404)', async () => {
    const id = await paidOrder(buyer, await plan({}));
    await refund(id, { amount_cents: 600, reason: 'most' });
    const pending = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: await plan({}), provider: 'mock' },
    });

    const tooMuch = await refund(id, { amount_cents: 401, reason: 'too much' });
    const unpaid = await refund(pending.json.data.id, { reason: 'not paid' });
    const byUser = await refund(id, { reason: 'me' }, randomUUID(), buyer);
    const unknown = await refund('NoSuchOrder123', { reason: 'who' });
    const noReason = await refund(id, { amount_cents: 1 });

    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json.message).toBe('amount_cents: larger than what is left to refund (400)');
    expect(unpaid.status).toBe(409);
    expect(byUser.status).toBe(403);
    expect(unknown.status).toBe(404);
    expect(noReason.status).toBe(400);
    const stored = await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers });
    expect(stored.json.data.refunded_cents).toBe(600);
  });

  it('never refunds past the total when different keys race', async () => {
    const id = await paidOrder(buyer, await plan({}));

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => refund(id, { amount_cents: 300, reason: 'race' })),
    );

    // 3 of 300 fit in 1000; the rest are refused for what is left.
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
    expect(answers.filter((answer) => answer.status === 400)).toHaveLength(7);
    const stored = await call('GET', `/api/v1/orders/${id}`, { headers: buyer.headers });
    expect(stored.json.data.refunded_cents).toBe(900);
  });
});
