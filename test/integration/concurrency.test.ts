// Fifty concurrent duplicates of every "exactly once" / "at most" operation, through the handlers in
// process: each yields exactly the allowed effects, every loser hears a clean 4xx or 200 (never a 5xx),
// and nothing is left behind in the table or the bucket (test/support/faults.ts findOrphans).
import { beforeAll, describe, expect, it } from 'vitest';
import { codeKey } from '#lib/accounts/codes.ts';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import { orderKey } from '#lib/billing/orders.ts';
import { outboxKey } from '#lib/billing/outbox.ts';
import { pendingKey } from '#lib/files/pending.ts';
import { incomingKey } from '#lib/files/prefixes.ts';
import { DAY_MS, type Grant } from '#lib/files/quota-model.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { usageKey } from '#lib/files/usage.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { logMailer } from '#lib/platform/mail/mailer.ts';
import {
  call as callPayments,
  deliverCallback,
  type LogLine,
  paidEvents,
} from '#test/integration/billing/helpers.ts';
import { callUpload, presignedUpload, uniquePng, uploadInput } from '#test/integration/files/helpers.ts';
import { noisePng, usageMatchesRecords } from '#test/integration/files/quota-helpers.ts';
import { authHarness, createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { buildEpayNotify, epayNotifyFields } from '#test/support/fake-gateways/index.ts';
import { findOrphans, listBucket, scanTable } from '#test/support/faults.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const N = 50;
const C_PID = '1001';
const C_KEY = 'epay-merchant-key-concurrency';

const lines: LogLine[] = [];
configureLogging({ level: 'info', sink: (line) => lines.push(JSON.parse(line) as LogLine) });

let table: Table;
let admin: TestAccount;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  admin = await createTestAccount({ role: 'admin' });
});

let n = 0;
const unique = (label: string) => `${label}${Date.now().toString(36)}${n++}`;
const times = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));
const statusCounts = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((counts, status) => {
    counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }, {});

async function expectNoOrphans() {
  expect(await findOrphans()).toEqual([]);
}

describe(`${N} concurrent duplicates`, () => {
  it('registration of one username: one account, 49 clean 409s, no claim or spent code of a loser', async () => {
    // Prepare: 50 contenders, each with a valid code of its own address, all for one username.
    const h = authHarness();
    const username = unique('race_');
    const emails = Array.from({ length: N }, (_, i) => `${username}-${i}@example.test`);
    await times(N, (i) => h.call('POST', '/auth/register/code', { email: emails[i] }));
    const codes = emails.map((email) => h.mail.codeFor(email));

    // Act
    const results = await times(N, (i) =>
      h.call('POST', '/auth/register', {
        username,
        email: emails[i],
        code: codes[i],
        password: 'pw-12345678',
      }),
    );

    // Assess
    expect(statusCounts(results.map((res) => res.status))).toEqual({ 201: 1, 409: N - 1 });
    for (const loser of results.filter((res) => res.status === 409)) {
      expect(loser.body.message).toBe('username: is already taken');
    }
    const winnerEmail = results.find((res) => res.status === 201)!.body.data.email as string;
    const accounts = (await scanTable()).filter(
      (item) => item.pk.startsWith('account#') && item.username === username,
    );
    expect(accounts).toHaveLength(1);
    expect((await h.table.get(identifierKey(username)))?.account_id).toBe(accounts[0]!.id);
    for (const email of emails) {
      const won = email === winnerEmail;
      expect((await h.table.get(identifierKey(email))) !== undefined).toBe(won);
      expect((await h.table.get(codeKey('register', email))) !== undefined).toBe(!won);
    }
    await expectNoOrphans();
  });

  it('sends of one code: the burst of 2 is admitted, 48 hear 429 with Retry-After, 2 mail lines', async () => {
    // Prepare: the no-mail fallback, so every mail is one log line.
    const h = authHarness({ mailer: logMailer });
    const user = await createTestAccount();
    const target = `${unique('burst')}@example.test`;
    const token = user.token;

    // Act
    const results = await times(N, () => h.call('POST', '/auth/email/code', { email: target }, { token }));

    // Assess
    expect(statusCounts(results.map((res) => res.status))).toEqual({ 200: 2, 429: N - 2 });
    for (const refused of results.filter((res) => res.status === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body.data).toEqual({ retry_after: Number(refused.headers['retry-after']) });
    }
    const mailLines = lines.filter((line) => line.message === 'mail' && line.to === target);
    expect(mailLines).toHaveLength(2);
    // One live code (the second send replaced the first); the daily count moved by the admitted two only.
    const code = await h.table.get(codeKey('email_bind', user.account.id));
    expect(code).toMatchObject({ attempts: 0, target });
    const day = new Date().toISOString().slice(0, 10);
    const daily = await h.table.get({
      pk: `throttle#code-send#email_bind#${user.account.id}`,
      sk: `day#${day}`,
    });
    expect(daily?.count).toBe(2);
  });

  it('attempts on one code: 50 wrong guesses count 5, and of 50 right ones exactly 1 registers', async () => {
    // Prepare
    const h = authHarness();
    const guessed = `${unique('guess')}@example.test`;
    const used = `${unique('right')}@example.test`;
    await h.call('POST', '/auth/register/code', { email: guessed });
    await h.call('POST', '/auth/register/code', { email: used });
    const guessedCode = h.mail.codeFor(guessed);
    const wrong = guessedCode === '000000' ? '111111' : '000000';
    const rightCode = h.mail.codeFor(used);

    // Act
    const guesses = await times(N, (i) =>
      h.call('POST', '/auth/register', {
        username: `${unique('g_')}_${i}`,
        email: guessed,
        code: wrong,
        password: 'pw-12345678',
      }),
    );
    const afterGuesses = await h.call('POST', '/auth/register', {
      username: unique('g_late_'),
      email: guessed,
      code: guessedCode,
      password: 'pw-12345678',
    });
    const rights = await times(N, (i) =>
      h.call('POST', '/auth/register', {
        username: `${unique('r_')}_${i}`,
        email: used,
        code: rightCode,
        password: 'pw-12345678',
      }),
    );

    // Assess: wrong guesses are all 400 and spend exactly the 5 attempts; the right code is then dead.
    expect(statusCounts(guesses.map((res) => res.status))).toEqual({ 400: N });
    expect((await h.table.get(codeKey('register', guessed)))?.attempts).toBe(5);
    expect(afterGuesses.status).toBe(400);
    // Right code fifty times: one account; the others are told the code is spent or the address is taken.
    const counts = statusCounts(rights.map((res) => res.status));
    expect(counts[201]).toBe(1);
    expect((counts[400] ?? 0) + (counts[409] ?? 0)).toBe(N - 1);
    expect(await h.table.get(codeKey('register', used))).toBeUndefined();
    const holders = (await scanTable()).filter(
      (item) => item.pk.startsWith('account#') && item.email === used,
    );
    expect(holders).toHaveLength(1);
    expect(await h.accounts.repository.ownerOf(guessed)).toBeUndefined();
    await expectNoOrphans();
  });

  it('callback settlement: 50 deliveries of one notification settle once, publish one order.paid, all answer success', async () => {
    // Prepare: channel_c (no api_url: the order gets a signed submit link, no network) and one order.
    const saved = await callPayments('PUT', '/api/v1/admin/payment', {
      headers: admin.headers,
      body: {
        channel_c: { enabled: true, pid: C_PID, key: C_KEY, gateway_url: 'https://pay.example.test/' },
        current_password: admin.password,
      },
    });
    expect(saved.status).toBe(200);
    const plan = await callPayments('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Concurrency plan', amount_cents: 1230 },
    });
    const buyer = await createTestAccount();
    const order = await callPayments('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: plan.json.data.id, provider: 'channel_c' },
    });
    expect(order.status).toBe(201);
    const orderId = order.json.data.id as string;
    const notification = buildEpayNotify({
      key: C_KEY,
      fields: epayNotifyFields({ pid: C_PID, out_trade_no: orderId, money: '12.30', trade_no: 'T-CONC-1' }),
    });

    // Act
    const answers = await times(N, () => deliverCallback('channel_c', notification));

    // Assess
    expect(statusCounts(answers.map((answer) => answer.status))).toEqual({ 200: N });
    expect(answers.every((answer) => answer.text === 'success')).toBe(true);
    expect(await paidEvents(lines, orderId)).toBe(1);
    const stored = await table.get(orderKey(orderId));
    expect(stored).toMatchObject({ status: 'paid', paid_via: 'callback', trade_no: 'T-CONC-1' });
    expect(stored?.extra_trade_nos).toBeUndefined();
    // The event settlement wrote to the outbox, delivered by the drain; it names the winning trade number.
    expect(await table.get(outboxKey(orderId))).toMatchObject({
      delivered_at: expect.any(String),
      detail: { order_id: orderId, trade_no: 'T-CONC-1', paid_at: stored?.paid_at },
    });
    await expectNoOrphans();
  });

  it('upload confirm: 50 confirms of one key give one record and one stored object', async () => {
    // Prepare
    const owner = await createTestAccount();
    const key = await presignedUpload(owner.headers);

    // Act
    const results = await times(N, () =>
      callUpload<UploadRecord>({
        method: 'POST',
        path: '/api/v1/upload/confirm',
        body: { key },
        headers: owner.headers,
      }),
    );

    // Assess
    expect(statusCounts(results.map((res) => res.status))).toEqual({ 200: N });
    expect(new Set(results.map((res) => res.body.data.id)).size).toBe(1);
    expect(results[0]!.body.data.key).toBe(key);
    const records = (await scanTable()).filter(
      (item) => item.pk.startsWith('file#') && item.owner_id === owner.account.id,
    );
    expect(records).toHaveLength(1);
    const objects = await listBucket();
    expect(objects).toContain(key);
    // The uploaded object is left to the bucket's lifecycle rule for incoming/ (nothing reads it again).
    expect(objects.filter((object) => object.includes(key)).sort()).toEqual([incomingKey(key), key].sort());
    expect((await table.get(pendingKey(key)))?.confirmed_file_id).toBe(records[0]!.id);
    await expectNoOrphans();
  });

  it('identical uploads: 50 direct uploads of the same bytes give one record and one object', async () => {
    // Prepare
    const owner = await createTestAccount();
    const { bytes } = uniquePng(makePng);
    const before = new Set(await listBucket());

    // Act
    const results = await times(N, (i) =>
      callUpload<UploadRecord>(uploadInput(owner.headers, { bytes, filename: `copy-${i}.png` })),
    );

    // Assess
    expect(statusCounts(results.map((res) => res.status))).toEqual({ 200: N });
    expect(new Set(results.map((res) => res.body.data.id)).size).toBe(1);
    const items = (await scanTable()).filter((item) => String(item.owner_id) === owner.account.id);
    expect(items.filter((item) => item.pk.startsWith('file#'))).toHaveLength(1);
    expect(items.filter((item) => item.pk.startsWith('filehash#'))).toHaveLength(1);
    const added = (await listBucket()).filter((key) => !before.has(key));
    expect(added).toEqual([results[0]!.body.data.key]);
    await expectNoOrphans();
  });
});

// ---- storage quotas (docs/DESIGN.md 11): reservations and grants under concurrency ------------------------

describe(`storage quota under ${N} concurrent requests`, () => {
  async function boughtPlan(buyer: TestAccount, plan: { quota_bytes: number; duration_days: number }) {
    const created = await callPayments('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: unique('Quota plan '), amount_cents: 990, ...plan },
    });
    const order = await callPayments('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: created.json.data.id, provider: 'mock' },
    });
    const paid = await callPayments('POST', `/api/v1/orders/${order.json.data.id}/pay`, {
      headers: buyer.headers,
    });
    expect(paid.status).toBe(200);
    return created.json.data.id as string;
  }

  it('uploads of distinct files over the remaining quota: never past the quota, usage exact, no orphans', async () => {
    // Prepare: a 20 000-byte plan, partly used; 50 files of ~1000 bytes (about 50 000 in all).
    const owner = await createTestAccount();
    const quota = 20_000;
    await boughtPlan(owner, { quota_bytes: quota, duration_days: 30 });
    const first = await callUpload<UploadRecord>(uploadInput(owner.headers, { bytes: noisePng(3000) }));
    expect(first.status).toBe(200);
    const files = Array.from({ length: N }, (_, i) => noisePng(900 + (i % 5) * 50));

    // Act
    const results = await times(N, (i) =>
      callUpload<UploadRecord>(uploadInput(owner.headers, { bytes: files[i]! })),
    );

    // Assess
    const counts = statusCounts(results.map((res) => res.status));
    expect(Object.keys(counts).sort()).toEqual(['200', '507']);
    const state = await usageMatchesRecords(table, owner.account.id);
    expect(state.record_bytes).toBeLessThanOrEqual(quota);
    expect(state.used_bytes).toBe(state.record_bytes);
    expect(state.file_count).toBe(state.record_count);
    expect(state.record_count).toBe(1 + (counts[200] ?? 0));
    // No refusal was spurious: whatever room is left is smaller than every refused file.
    const refusedSizes = results.flatMap((res, i) => (res.status === 507 ? [files[i]!.length] : []));
    expect(quota - state.record_bytes).toBeLessThan(Math.min(...refusedSizes));
    for (const refused of results.filter((res) => res.status === 507)) {
      expect(refused.body.message).toBe('storage quota exceeded');
      expect((refused.body.data as unknown as { quota_bytes: number }).quota_bytes).toBe(quota);
    }
    await expectNoOrphans();
  });

  const grantOf = async (account: TestAccount) =>
    (await table.get<{ pk: string; sk: string; grant?: Grant }>(usageKey(account.account.id)))?.grant;

  it('settlements of one order: one grant (the active plan extended once), one order.paid', async () => {
    // Prepare: the plan is active already (ends T1); a second order for it, paid 50 times at once.
    const buyer = await createTestAccount();
    const planId = await boughtPlan(buyer, { quota_bytes: 50_000, duration_days: 30 });
    const endsBefore = (await grantOf(buyer))?.ends_ms as number;
    const order = await callPayments('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    const orderId = order.json.data.id as string;

    // Act
    const answers = await times(N, () =>
      callPayments('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers }),
    );

    // Assess
    expect(statusCounts(answers.map((answer) => answer.status))).toEqual({ 200: N });
    const grant = (await table.get(usageKey(buyer.account.id)))?.grant;
    expect(grant).toMatchObject({ order_id: orderId, ends_ms: endsBefore + 30 * DAY_MS });
    expect((await table.get(orderKey(orderId)))?.grant).toEqual(grant);
    expect(await paidEvents(lines, orderId)).toBe(1);
    await expectNoOrphans();
  });

  it('settlements of five orders of one plan at once: each extends the grant exactly once', async () => {
    // Prepare
    const buyer = await createTestAccount();
    const planId = await boughtPlan(buyer, { quota_bytes: 50_000, duration_days: 10 });
    const endsBefore = (await grantOf(buyer))?.ends_ms as number;
    const orders = await times(5, () =>
      callPayments('POST', '/api/v1/orders', {
        headers: buyer.headers,
        body: { plan_id: planId, provider: 'mock' },
      }),
    );

    // Act
    const answers = await Promise.all(
      orders.map((order) =>
        callPayments('POST', `/api/v1/orders/${order.json.data.id}/pay`, { headers: buyer.headers }),
      ),
    );

    // Assess
    expect(statusCounts(answers.map((answer) => answer.status))).toEqual({ 200: 5 });
    expect((await grantOf(buyer))?.ends_ms).toBe(endsBefore + 5 * 10 * DAY_MS);
  });

  it('uploads and deletes of one owner at once: usage stays exactly the sum of the records', async () => {
    // Prepare
    const owner = await createTestAccount();
    const existing = await times(20, () =>
      callUpload<UploadRecord>(uploadInput(owner.headers, { bytes: noisePng(800) })),
    );
    expect(existing.every((res) => res.status === 200)).toBe(true);

    // Act: 30 new uploads, 20 deletes for good (10 of them twice), all at once. A delete for good moves the
    // file to the trash, then deletes it from there (docs/UPLOADS.md "Trash").
    const removeForGood = async (id: string) => {
      const trashed = await callUpload({
        method: 'DELETE',
        path: `/api/v1/files/${id}`,
        headers: owner.headers,
      });
      if (trashed.status !== 200) return trashed;
      return callUpload({ method: 'DELETE', path: `/api/v1/files/trash/${id}`, headers: owner.headers });
    };
    const results = await Promise.all([
      ...Array.from({ length: 30 }, () => callUpload(uploadInput(owner.headers, { bytes: noisePng(700) }))),
      ...existing.slice(0, 10).flatMap((res) => [0, 1].map(() => removeForGood(res.body.data.id))),
    ]);

    // Assess
    expect(statusCounts(results.map((res) => res.status))).toEqual({ 200: 40, 404: 10 });
    const state = await usageMatchesRecords(table, owner.account.id);
    expect(state.record_count).toBe(40);
    expect(state.used_bytes).toBe(state.record_bytes);
    expect(state.file_count).toBe(40);
    await expectNoOrphans();
  });
});
