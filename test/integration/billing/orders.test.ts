// Plans, orders and the provider/path matrix of who may confirm, through the payments handler on DynamoDB Local.
import { beforeAll, describe, expect, it } from 'vitest';
import { accountKey } from '#lib/accounts/repository.ts';
import { orderKey } from '#lib/billing/orders.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { type Answer, call, captureLog, paidEvents } from './helpers.ts';

const log = captureLog();
let table: Table;
let admin: TestAccount;
let alice: TestAccount;
let bob: TestAccount;
let planId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, alice, bob] = await Promise.all([
    createTestAccount({ role: 'admin' }),
    createTestAccount(),
    createTestAccount(),
  ]);
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'VIP month', description: 'One month', amount_cents: 1230 },
  });
  planId = plan.json.data.id;
});

async function placeOrder(account: TestAccount, provider?: string): Promise<Answer> {
  return call('POST', '/api/v1/orders', {
    headers: account.headers,
    body: provider ? { plan_id: planId, provider } : { plan_id: planId },
  });
}

async function expireOrder(id: string): Promise<void> {
  await table.update(orderKey(id), {
    UpdateExpression: 'SET deadline_ms = :past',
    ExpressionAttributeValues: { ':past': Date.now() - 1000 },
  });
}

describe('plans catalogue', () => {
  it('lets an administrator create a plan (201, integer cents) and lists active plans publicly', async () => {
    // Act
    const created = await call('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Hidden', amount_cents: 99, active: false },
    });
    const publicList = await call('GET', '/api/v1/plans');
    const adminList = await call('GET', '/api/v1/admin/plans', { headers: admin.headers });

    // Assess
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      name: 'Hidden',
      description: '',
      amount_cents: 99,
      active: false,
      quota_bytes: null,
      bandwidth_bytes: null,
      duration_days: 0,
      retention_days: null,
    });
    expect(Object.keys(created.json.data).sort()).toEqual(
      [
        'active',
        'amount_cents',
        'bandwidth_bytes',
        'created_at',
        'description',
        'duration_days',
        'id',
        'name',
        'quota_bytes',
        'retention_days',
        'watermark',
      ].sort(),
    );
    const publicIds = publicList.json.data.map((plan: { id: string }) => plan.id);
    expect(publicIds).toContain(planId);
    expect(publicIds).not.toContain(created.json.data.id);
    expect(adminList.json.data.map((plan: { id: string }) => plan.id)).toContain(created.json.data.id);
  });

  it('refuses a float, a zero or a missing amount with 400 naming amount_cents', async () => {
    for (const amount of [12.5, 0, '100', undefined]) {
      const answer = await call('POST', '/api/v1/admin/plans', {
        headers: admin.headers,
        body: { name: 'Bad', amount_cents: amount },
      });
      expect(answer.status).toBe(400);
      expect(answer.json.message).toContain('amount_cents');
    }
  });

  it('keeps plan management to administrators (user 403, anonymous 401)', async () => {
    expect((await call('POST', '/api/v1/admin/plans', { headers: alice.headers, body: {} })).status).toBe(
      403,
    );
    expect((await call('GET', '/api/v1/admin/plans')).status).toBe(401);
  });

  it('updates and deletes a plan; an unknown plan is 404', async () => {
    // Prepare
    const plan = await call('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Temp', amount_cents: 500 },
    });
    const id = plan.json.data.id;

    // Act
    const patched = await call('PATCH', `/api/v1/admin/plans/${id}`, {
      headers: admin.headers,
      body: { amount_cents: 700, active: false },
    });
    const deleted = await call('DELETE', `/api/v1/admin/plans/${id}`, { headers: admin.headers });
    const again = await call('DELETE', `/api/v1/admin/plans/${id}`, { headers: admin.headers });
    const missing = await call('PATCH', '/api/v1/admin/plans/nope', {
      headers: admin.headers,
      body: { name: 'x' },
    });

    // Assess
    expect(patched.json.data).toMatchObject({ amount_cents: 700, active: false, name: 'Temp' });
    expect(deleted.status).toBe(200);
    expect(again.status).toBe(404);
    expect(missing.status).toBe(404);
  });
});

describe('orders', () => {
  it('creates an order from the plan price with the DESIGN 7 and 17 fields (201)', async () => {
    // Act
    const answer = await placeOrder(alice, 'manual');

    // Assess
    expect(answer.status).toBe(201);
    const order = answer.json.data;
    expect(Object.keys(order).sort()).toEqual(
      [
        'amount_cents',
        'coupon_code',
        'created_at',
        'currency',
        'discount_cents',
        'id',
        'original_cents',
        'refunded_cents',
        'refunds',
        'paid_at',
        'pay_url',
        'plan_id',
        'plan_name',
        'provider',
        'qr_code',
        'status',
        'trade_no',
        'updated_at',
        'user_id',
      ].sort(),
    );
    expect(order).toMatchObject({
      user_id: alice.account.id,
      plan_id: planId,
      plan_name: 'VIP month',
      amount_cents: 1230,
      currency: 'CNY',
      provider: 'manual',
      status: 'pending',
      trade_no: null,
      pay_url: null,
      qr_code: null,
      paid_at: null,
      // docs/DESIGN.md 17: no coupon, nothing refunded.
      original_cents: 1230,
      discount_cents: 0,
      coupon_code: null,
      refunded_cents: 0,
      refunds: [],
    });
    expect(order.id).toMatch(/^[0-9A-Za-z]{1,32}$/);
    expect(order.created_at).toMatch(/\+00:00$/);
  });

  it('uses payment.default_gateway, falling back to manual when it is not registered', async () => {
    // test config: default_gateway manual (schema default), mock enabled
    const answer = await placeOrder(alice);
    const gateways = await call('GET', '/api/v1/payment-gateways');
    expect(answer.json.data.provider).toBe('manual');
    expect(gateways.json.data).toEqual(['manual', 'mock']);
  });

  it('refuses an unknown plan (404), an unregistered provider (400) and no session (401)', async () => {
    expect(
      (await call('POST', '/api/v1/orders', { headers: alice.headers, body: { plan_id: 'nope' } })).status,
    ).toBe(404);
    const unregistered = await placeOrder(alice, 'channel_a');
    expect(unregistered.status).toBe(400);
    expect(unregistered.json.message).toContain('provider');
    expect((await placeOrder(alice, 'bitcoin')).status).toBe(400);
    expect((await call('POST', '/api/v1/orders', { body: { plan_id: planId } })).status).toBe(401);
  });

  it("lists and reads only the caller's own orders; another user's order is 404", async () => {
    // Prepare
    const mine = (await placeOrder(alice, 'manual')).json.data;
    const theirs = (await placeOrder(bob, 'manual')).json.data;

    // Act
    const list = await call('GET', '/api/v1/orders?limit=100', { headers: alice.headers });
    const own = await call('GET', `/api/v1/orders/${mine.id}`, { headers: alice.headers });
    const other = await call('GET', `/api/v1/orders/${theirs.id}`, { headers: alice.headers });

    // Assess
    const ids = list.json.data.items.map((order: { id: string }) => order.id);
    expect(ids).toContain(mine.id);
    expect(ids).not.toContain(theirs.id);
    expect(own.json.data.id).toBe(mine.id);
    expect(other.status).toBe(404);
  });

  it('pages the own list newest first with a cursor', async () => {
    const user = await createTestAccount();
    const first = (await placeOrder(user, 'manual')).json.data;
    const second = (await placeOrder(user, 'manual')).json.data;
    const page1 = await call('GET', '/api/v1/orders?limit=1', { headers: user.headers });
    const page2 = await call('GET', `/api/v1/orders?limit=1&cursor=${page1.json.data.next_cursor}`, {
      headers: user.headers,
    });
    expect(page1.json.data.items.map((o: { id: string }) => o.id)).toEqual([second.id]);
    expect(page2.json.data.items.map((o: { id: string }) => o.id)).toEqual([first.id]);
  });

  it('cancels a pending order once; a paid or expired order cannot be cancelled (409)', async () => {
    // Prepare
    const order = (await placeOrder(alice, 'mock')).json.data;
    const paid = (await placeOrder(alice, 'mock')).json.data;
    await call('POST', `/api/v1/orders/${paid.id}/pay`, { headers: alice.headers });
    const late = (await placeOrder(alice, 'mock')).json.data;
    await expireOrder(late.id);

    // Act
    const cancelled = await call('POST', `/api/v1/orders/${order.id}/cancel`, { headers: alice.headers });
    const again = await call('POST', `/api/v1/orders/${order.id}/cancel`, { headers: alice.headers });
    const ofPaid = await call('POST', `/api/v1/orders/${paid.id}/cancel`, { headers: alice.headers });
    const ofExpired = await call('POST', `/api/v1/orders/${late.id}/cancel`, { headers: alice.headers });
    const byOther = await call('POST', `/api/v1/orders/${order.id}/cancel`, { headers: bob.headers });

    // Assess
    expect(cancelled.json.data.status).toBe('cancelled');
    expect(cancelled.json.data.pay_url).toBeNull();
    expect(again.status).toBe(200);
    expect(ofPaid.status).toBe(409);
    expect(ofExpired.status).toBe(409);
    expect(byOther.status).toBe(404);
  });

  it('reads a pending order past its time as expired, and its owner cannot pay it', async () => {
    // Prepare
    const order = (await placeOrder(alice, 'mock')).json.data;
    await expireOrder(order.id);

    // Act
    const read = await call('GET', `/api/v1/orders/${order.id}`, { headers: alice.headers });
    const pay = await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers });

    // Assess
    expect(read.json.data.status).toBe('expired');
    expect(read.json.data.pay_url).toBeNull();
    expect(pay.status).toBe(409);
    expect((await table.get(orderKey(order.id)))?.status).toBe('pending');
  });

  it('gives a mock order a signed cashier link and lets its owner pay it', async () => {
    const order = (await placeOrder(alice, 'mock')).json.data;
    expect(order.pay_url).toMatch(new RegExp(`^http://localhost:3000/pay/mock/${order.id}\\?token=`));
    const paid = await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers });
    expect(paid.status).toBe(200);
    expect(paid.json.data).toMatchObject({ status: 'paid', pay_url: null });
    expect(paid.json.data.paid_at).toMatch(/\+00:00$/);
    expect(await paidEvents(log, order.id)).toBe(1);
  });

  it('lists every order for administrators only, with settlement details', async () => {
    const order = (await placeOrder(bob, 'manual')).json.data;
    const list = await call('GET', '/api/v1/admin/orders?limit=100', { headers: admin.headers });
    expect(list.status).toBe(200);
    const found = list.json.data.items.find((item: { id: string }) => item.id === order.id);
    expect(found).toMatchObject({
      id: order.id,
      user_id: bob.account.id,
      late_payment: false,
      paid_via: null,
    });
    expect((await call('GET', '/api/v1/admin/orders', { headers: alice.headers })).status).toBe(403);
  });

  it("names each order's buyer by username, and null once the buyer's account is gone", async () => {
    // Prepare: orders of three buyers on one page, one of whom is then deleted.
    const carol = await createTestAccount();
    const [ofAlice, ofBob, ofCarol] = (await Promise.all(
      [alice, bob, carol].map(async (buyer) => (await placeOrder(buyer, 'manual')).json.data.id as string),
    )) as [string, string, string];
    await table.delete(accountKey(carol.account.id));

    // Act
    const list = await call('GET', '/api/v1/admin/orders?limit=100', { headers: admin.headers });
    const writtenOff = await call('POST', `/api/v1/admin/orders/${ofBob}/pay`, { headers: admin.headers });

    // Assess
    expect(list.status).toBe(200);
    const buyerOf = (id: string) =>
      list.json.data.items.find((item: { id: string }) => item.id === id)?.username;
    expect(buyerOf(ofAlice)).toBe(alice.account.username);
    expect(buyerOf(ofBob)).toBe(bob.account.username);
    expect(buyerOf(ofCarol)).toBeNull();
    expect(writtenOff.json.data).toMatchObject({ id: ofBob, username: bob.account.username, status: 'paid' });
  });

  it('pages every order newest first across the listing shards, each once; a forged cursor is 400', async () => {
    // Prepare: orders that land in several shards of the all-orders listing.
    const placed: string[] = [];
    for (let index = 0; index < 6; index += 1) placed.push((await placeOrder(alice, 'manual')).json.data.id);
    const shards = new Set(
      await Promise.all(placed.map(async (id) => (await table.get(orderKey(id)))?.gsi2pk as string)),
    );

    // Act
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await call('GET', `/api/v1/admin/orders?limit=2${query}`, { headers: admin.headers });
      expect(page.status).toBe(200);
      seen.push(...page.json.data.items.map((item: { id: string }) => item.id));
      cursor = page.json.data.next_cursor;
    } while (cursor);
    const forged = await call('GET', '/api/v1/admin/orders?cursor=bm90LWEtY3Vyc29y', {
      headers: admin.headers,
    });

    // Assess
    expect(shards.size).toBeGreaterThan(1);
    for (const shard of shards) expect(shard).toMatch(/^orders#\d+$/);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => placed.includes(id))).toEqual([...placed].reverse());
    expect(forged.status).toBe(400);
  });
});

describe('who may confirm payment (SPEC 4.3 rule 1)', () => {
  it('lets only an administrator write off a manual order, and only once', async () => {
    // Prepare
    const order = (await placeOrder(alice, 'manual')).json.data;

    // Act
    const byOwner = await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers });
    const byCallback = await call('POST', '/api/v1/payments/manual/callback', { body: 'x=1' });
    const byUserOnAdminPath = await call('POST', `/api/v1/admin/orders/${order.id}/pay`, {
      headers: alice.headers,
    });
    const byAdmin = await call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers });
    const again = await call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers });

    // Assess
    expect(byOwner.status).toBe(403);
    expect(byCallback.status).toBe(403);
    expect(byUserOnAdminPath.status).toBe(403);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.json.data).toMatchObject({ status: 'paid', paid_via: 'manual' });
    expect(again.status).toBe(200);
    expect(await paidEvents(log, order.id)).toBe(1);
  });

  it('refuses an administrator write-off of a mock order and a callback for it (403)', async () => {
    const order = (await placeOrder(alice, 'mock')).json.data;
    expect(
      (await call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers })).status,
    ).toBe(403);
    expect(
      (await call('POST', '/api/v1/payments/mock/callback', { body: `out_trade_no=${order.id}` })).status,
    ).toBe(403);
    expect(
      (await call('GET', `/api/v1/orders/${order.id}`, { headers: alice.headers })).json.data.status,
    ).toBe('pending');
  });

  it('refuses to pay someone else’s mock order (404) and a cancelled one (409)', async () => {
    const order = (await placeOrder(alice, 'mock')).json.data;
    expect((await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: bob.headers })).status).toBe(404);
    await call('POST', `/api/v1/orders/${order.id}/cancel`, { headers: alice.headers });
    expect((await call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers })).status).toBe(
      409,
    );
  });

  it('writes off an expired manual order, flagged as a late payment', async () => {
    const order = (await placeOrder(alice, 'manual')).json.data;
    await expireOrder(order.id);
    const answer = await call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers });
    expect(answer.json.data).toMatchObject({
      status: 'paid',
      late_payment: true,
      status_before_payment: 'expired',
    });
  });

  it('settles 20 concurrent owner payments of one mock order exactly once', async () => {
    // Prepare
    const order = (await placeOrder(alice, 'mock')).json.data;

    // Act
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', `/api/v1/orders/${order.id}/pay`, { headers: alice.headers }),
      ),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((answer) => answer.json.data.paid_at)).size).toBe(1);
    expect(await paidEvents(log, order.id)).toBe(1);
  });

  it('settles 20 concurrent administrator write-offs of one manual order exactly once', async () => {
    const order = (await placeOrder(bob, 'manual')).json.data;
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', `/api/v1/admin/orders/${order.id}/pay`, { headers: admin.headers }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(await paidEvents(log, order.id)).toBe(1);
  });
});

describe('payment-callback function URL', () => {
  it('routes a function-URL event ($default route key) to the callback route', async () => {
    // Prepare: a function URL event names no route; only the path says which.
    const { apiEvent, lambdaContext } = await import('#test/support/events.ts');
    const { handler } = await import('#functions/payment-callback/handler.ts');
    const event = apiEvent({ method: 'POST', path: '/api/v1/payments/manual/callback', body: 'x=1' });
    const viaUrl = { ...event, routeKey: '$default', pathParameters: undefined };
    viaUrl.requestContext = { ...viaUrl.requestContext, routeKey: '$default' };

    // Act
    const result = await handler(viaUrl, lambdaContext);

    // Assess: reached the route (403 for manual), not the 404 of an unknown route.
    expect(result.statusCode).toBe(403);
  });
});
