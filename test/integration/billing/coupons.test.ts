// Coupons (docs/DESIGN.md 17): administrators' CRUD with codes unique ignoring case, one answer for every
// unusable code, the redemption taken in the order's own transaction (never past max_redemptions or
// per_account_limit under concurrency), given back on cancel and on unpaid expiry, and a free order paid at
// once with its grant. The limits on coupon checks: coupon-guessing.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { COUPON_BUCKETS, couponCountKey, couponKey, holdKey } from '#lib/billing/coupons.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';
import { createPlan, grantOf, reconcilerAhead } from './reconcile-support.ts';

let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
/** 1230 cents, 5 MiB for 30 days (reconcile-support.ts). */
let planId: string;
let otherPlanId: string;

const HOUR_MS = 3_600_000;
let serial = 0;
function uniqueCode(prefix = 'C'): string {
  serial += 1;
  return `${prefix}${Date.now().toString(36)}${serial}`;
}

async function createCoupon(body: Record<string, unknown>) {
  return call('POST', '/api/v1/admin/coupons', {
    headers: admin.headers,
    body: { code: uniqueCode(), percent_off: 10, ...body },
  });
}

async function newCoupon(body: Record<string, unknown>) {
  const answer = await createCoupon(body);
  expect(answer.status).toBe(201);
  return answer.json.data as { id: string; code: string };
}

const validate = (who: TestAccount, code: string, plan = planId) =>
  call('POST', '/api/v1/coupons/validate', { headers: who.headers, body: { code, plan_id: plan } });

const order = (who: TestAccount, code: string | undefined, provider = 'mock') =>
  call('POST', '/api/v1/orders', {
    headers: who.headers,
    body: { plan_id: planId, provider, ...(code === undefined ? {} : { coupon_code: code }) },
  });

/** The coupon's count as stored: its older count on its own item and its buckets'. */
async function redemptionsOf(id: string): Promise<number> {
  const items = await Promise.all([
    table.get(couponKey(id)),
    ...Array.from({ length: COUPON_BUCKETS }, (_, bucket) => table.get(couponCountKey(id, bucket))),
  ]);
  const [coupon, ...buckets] = items;
  return Number(coupon?.redemptions ?? 0) + buckets.reduce((sum, item) => sum + Number(item?.used ?? 0), 0);
}

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  [planId, otherPlanId] = await Promise.all([createPlan(admin, 'Coupon plan'), createPlan(admin, 'Other')]);
});

describe('coupons in the back office', () => {
  it('creates a coupon with its defaults, lists it, changes it and deletes it', async () => {
    // Act
    const made = await createCoupon({
      code: uniqueCode('Spring'),
      amount_off_cents: 300,
      percent_off: undefined,
    });
    const listed = await call('GET', '/api/v1/admin/coupons?limit=100', { headers: admin.headers });
    const patched = await call('PATCH', `/api/v1/admin/coupons/${made.json.data.id}`, {
      headers: admin.headers,
      body: { active: false, max_redemptions: 9 },
    });
    const deleted = await call('DELETE', `/api/v1/admin/coupons/${made.json.data.id}`, {
      headers: admin.headers,
    });
    const again = await call('DELETE', `/api/v1/admin/coupons/${made.json.data.id}`, {
      headers: admin.headers,
    });

    // Assess
    expect(made.status).toBe(201);
    expect(made.json.data).toMatchObject({
      amount_off_cents: 300,
      percent_off: null,
      per_account_limit: 1,
      max_redemptions: null,
      redemptions: 0,
      active: true,
    });
    expect(listed.json.data.items.map((coupon: { id: string }) => coupon.id)).toContain(made.json.data.id);
    expect(patched.json.data).toMatchObject({ active: false, max_redemptions: 9 });
    expect(deleted.status).toBe(200);
    expect(again.status).toBe(404);
  });

  it('refuses a code taken in another case (409) and frees it when the coupon is deleted', async () => {
    const code = uniqueCode('Dup');
    const first = await newCoupon({ code });

    const clash = await createCoupon({
      code: code.toUpperCase() === code ? code.toLowerCase() : code.toUpperCase(),
    });
    await call('DELETE', `/api/v1/admin/coupons/${first.id}`, { headers: admin.headers });
    const reused = await createCoupon({ code: code.toLowerCase() });

    expect(clash.status).toBe(409);
    expect(reused.status).toBe(201);
  });

  it.each([
    ['a code too short', { code: 'ab' }, 'code'],
    ['a code with a space', { code: 'two words' }, 'code'],
    ['both kinds of discount', { percent_off: 10, amount_off_cents: 100 }, 'percent_off'],
    ['no discount', { percent_off: undefined }, 'percent_off'],
    ['a percentage over 100', { percent_off: 101 }, 'percent_off'],
    ['a per-account limit of 0', { per_account_limit: 0 }, 'per_account_limit'],
    [
      'an end before the start',
      { starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' },
      'ends_at',
    ],
    ['a date that is no date', { ends_at: 'tomorrow' }, 'ends_at'],
  ])('refuses %s with 400 naming the field', async (_case, body, field) => {
    const answer = await createCoupon(body);
    expect(answer.status).toBe(400);
    expect(answer.json.message).toMatch(new RegExp(`^${field}: `));
  });

  it('is for administrators only (403 for a user)', async () => {
    const answer = await call('POST', '/api/v1/admin/coupons', {
      headers: buyer.headers,
      body: { code: uniqueCode(), percent_off: 10 },
    });
    expect(answer.status).toBe(403);
    expect((await call('GET', '/api/v1/admin/coupons', { headers: buyer.headers })).status).toBe(403);
  });
});

describe('validate', () => {
  it('answers the discount a code gives on a plan (percent rounds the discount down)', async () => {
    const coupon = await newCoupon({ percent_off: 15 });
    const answer = await validate(buyer, coupon.code.toLowerCase());
    expect(answer.status).toBe(200);
    // 15% of 1230 is 184.5: 184 off.
    expect(answer.json.data).toEqual({
      code: coupon.code,
      amount_cents: 1230,
      discount_cents: 184,
      final_cents: 1046,
    });
  });

  it('answers every code that cannot be used alike, so a guesser learns nothing (validate and order)', async () => {
    // Prepare: a code of each kind that cannot be used by `user` on the plan.
    const now = Date.now();
    const user = await createTestAccount();
    const used = await newCoupon({});
    expect((await order(user, used.code)).status).toBe(201);
    const usedUp = await newCoupon({ max_redemptions: 1 });
    expect((await order(buyer, usedUp.code)).status).toBe(201);
    const switchedOff = await newCoupon({});
    await call('PATCH', `/api/v1/admin/coupons/${switchedOff.id}`, {
      headers: admin.headers,
      body: { active: false },
    });
    const cases: Record<string, string> = {
      unknown: 'NoSuchCode',
      'switched off': switchedOff.code,
      'not started': (await newCoupon({ starts_at: new Date(now + HOUR_MS).toISOString() })).code,
      ended: (await newCoupon({ ends_at: new Date(now - HOUR_MS).toISOString() })).code,
      'used up': usedUp.code,
      'already used by this buyer': used.code,
      'for another plan': (await newCoupon({ plan_ids: [otherPlanId] })).code,
      'below the minimum': (await newCoupon({ min_amount_cents: 5000 })).code,
    };

    // Act
    const answers: Record<string, unknown> = {};
    for (const [kind, code] of Object.entries(cases)) {
      const [checked, placed] = [await validate(user, code), await order(user, code)];
      answers[kind] = { validate: [checked.status, checked.text], order: [placed.status, placed.text] };
    }

    // Assess: one answer for all (the same bytes), and no order placed.
    const one = JSON.stringify({
      code: 400,
      message: 'coupon: cannot be used',
      data: { fields: [{ field: 'coupon', message: 'cannot be used' }] },
    });
    for (const [kind, answer] of Object.entries(answers)) {
      expect(answer, kind).toEqual({ validate: [400, one], order: [400, one] });
    }
    const history = await call('GET', '/api/v1/orders?limit=100', { headers: user.headers });
    expect(history.json.data.items).toHaveLength(1);
  });
});

describe('orders with a coupon', () => {
  it('carries original_cents, discount_cents, amount_cents and coupon_code, and counts one redemption', async () => {
    const coupon = await newCoupon({ amount_off_cents: 230, percent_off: undefined });
    const placed = await order(buyer, coupon.code);
    expect(placed.status).toBe(201);
    expect(placed.json.data).toMatchObject({
      original_cents: 1230,
      discount_cents: 230,
      amount_cents: 1000,
      coupon_code: coupon.code,
      status: 'pending',
    });
    expect(await redemptionsOf(coupon.id)).toBe(1);
    // The buyer's history shows the same.
    const history = await call('GET', '/api/v1/orders?limit=100', { headers: buyer.headers });
    expect(
      history.json.data.items.find((item: { id: string }) => item.id === placed.json.data.id),
    ).toMatchObject({
      discount_cents: 230,
      coupon_code: coupon.code,
    });
  });

  it('places exactly 5 of 50 concurrent orders against max_redemptions 5', async () => {
    const coupon = await newCoupon({ max_redemptions: 5, per_account_limit: 100 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => order(buyer, coupon.code)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status !== 201).every((status) => status === 400)).toBe(true);
    expect(answers.find((answer) => answer.status === 400)?.json.message).toBe('coupon: cannot be used');
    expect(await redemptionsOf(coupon.id)).toBe(5);
  });

  it('places exactly 40 of 120 concurrent orders against max_redemptions 40, spread over its buckets', async () => {
    const coupon = await newCoupon({ max_redemptions: 40, per_account_limit: 1000 });
    const answers = await Promise.all(Array.from({ length: 120 }, () => order(buyer, coupon.code)));
    const buckets = await Promise.all(
      Array.from({ length: COUPON_BUCKETS }, (_, bucket) => table.get(couponCountKey(coupon.id, bucket))),
    );
    const stored = await table.get(couponKey(coupon.id));
    const listed = await call('GET', '/api/v1/admin/coupons?limit=100', { headers: admin.headers });

    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(40);
    expect(answers.every((answer) => answer.status === 201 || answer.status === 400)).toBe(true);
    expect(await redemptionsOf(coupon.id)).toBe(40);
    // No item took every order: each bucket holds its share (40 over 16: 3 or 2), the coupon's own none.
    expect(Math.max(...buckets.map((item) => Number(item?.used ?? 0)))).toBeLessThanOrEqual(3);
    expect(stored?.redemptions).toBe(0);
    const view = listed.json.data.items.find((item: { id: string }) => item.id === coupon.id);
    expect(view?.redemptions).toBe(40);
    // 120 orders at once took 11 s of the default 20 on the shared machine, and over 20 beside other work.
  }, 60_000);

  it("writes no shared counter for an unlimited coupon: its orders land in many buckets, the coupon's item untouched", async () => {
    const coupon = await newCoupon({ per_account_limit: 1000 });
    const before = await table.get(couponKey(coupon.id));
    const answers = await Promise.all(Array.from({ length: 48 }, () => order(buyer, coupon.code)));
    const buckets = await Promise.all(
      Array.from({ length: COUPON_BUCKETS }, (_, bucket) => table.get(couponCountKey(coupon.id, bucket))),
    );

    expect(answers.every((answer) => answer.status === 201)).toBe(true);
    expect(await table.get(couponKey(coupon.id))).toEqual(before);
    expect(buckets.filter((item) => Number(item?.used ?? 0) > 0).length).toBeGreaterThanOrEqual(8);
    expect(await redemptionsOf(coupon.id)).toBe(48);
  });

  it('keeps counting the orders of a coupon from before the buckets toward its limit, and gives them back there', async () => {
    // Prepare: a coupon whose own item holds 3 redemptions, one of them an order's hold without a bucket.
    const user = await createTestAccount();
    const coupon = await newCoupon({ max_redemptions: 5, per_account_limit: 100 });
    const older = (await order(user, coupon.code)).json.data;
    const hold = await table.get(holdKey(older.id));
    const bucket = Number(hold?.bucket);
    const counted = (await table.get(couponCountKey(coupon.id, bucket))) as Record<string, unknown>;
    await table.put({ ...counted, used: 0 } as never);
    const stored = (await table.get(couponKey(coupon.id))) as Record<string, unknown>;
    await table.put({ ...stored, redemptions: 3 } as never);
    const { bucket: _bucket, ...olderHold } = hold!;
    await table.put(olderHold as never);

    // Act
    const answers = await Promise.all(Array.from({ length: 6 }, () => order(buyer, coupon.code)));
    const cancelled = await call('POST', `/api/v1/orders/${older.id}/cancel`, { headers: user.headers });

    // Assess: 3 + 2 = 5; the older hold's redemption given back on the coupon's own item.
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(2);
    expect(cancelled.json.data.status).toBe('cancelled');
    expect((await table.get(couponKey(coupon.id)))?.redemptions).toBe(2);
    expect(await redemptionsOf(coupon.id)).toBe(4);
  });

  it('never lets one buyer pass per_account_limit, even with 20 orders at once', async () => {
    const user = await createTestAccount();
    const coupon = await newCoupon({ per_account_limit: 2 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => order(user, coupon.code)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(2);
    expect(answers.find((answer) => answer.status === 400)?.json.message).toBe('coupon: cannot be used');
    // Another buyer still may.
    expect((await order(buyer, coupon.code)).status).toBe(201);
    expect(await redemptionsOf(coupon.id)).toBe(3);
  });

  it('gives the redemption back when the order is cancelled', async () => {
    const user = await createTestAccount();
    const coupon = await newCoupon({ max_redemptions: 1 });
    const first = (await order(user, coupon.code)).json.data;
    expect((await order(buyer, coupon.code)).json.message).toBe('coupon: cannot be used');

    const cancelled = await call('POST', `/api/v1/orders/${first.id}/cancel`, { headers: user.headers });
    const cancelledAgain = await call('POST', `/api/v1/orders/${first.id}/cancel`, { headers: user.headers });

    expect(cancelled.json.data.status).toBe('cancelled');
    expect(cancelledAgain.json.data.status).toBe('cancelled');
    expect(await redemptionsOf(coupon.id)).toBe(0);
    // The same buyer may use it again, and so may another.
    expect((await order(user, coupon.code)).status).toBe(201);
  });

  it('gives the redemption back once an order expires unpaid (the reconciler with its clock past the deadline)', async () => {
    const user = await createTestAccount();
    const coupon = await newCoupon({ max_redemptions: 1 });
    const placed = (await order(user, coupon.code, 'manual')).json.data;
    // The order TTL is 30 minutes: 29 minutes on, nothing is given back; 31 minutes on, it is, once.
    await reconcilerAhead(29)();
    expect(await redemptionsOf(coupon.id)).toBe(1);

    const [run, rerun] = [await reconcilerAhead(31)(), await reconcilerAhead(32)()];

    expect(run.coupons_released).toBeGreaterThanOrEqual(1);
    expect(rerun.coupons_released).toBe(0);
    expect(await redemptionsOf(coupon.id)).toBe(0);
    const stored = await call('GET', `/api/v1/orders/${placed.id}`, { headers: user.headers });
    expect(stored.json.data.status).toBe('pending');
  });

  it('keeps the redemption of a paid order when its deadline passes', async () => {
    const coupon = await newCoupon({ max_redemptions: 3, per_account_limit: 3 });
    const placed = (await order(buyer, coupon.code)).json.data;
    expect((await call('POST', `/api/v1/orders/${placed.id}/pay`, { headers: buyer.headers })).status).toBe(
      200,
    );

    await reconcilerAhead(31)();

    expect(await redemptionsOf(coupon.id)).toBe(1);
  });

  it('pays a zero-amount order at once with provider free, its grant applied', async () => {
    const user = await createTestAccount();
    const coupon = await newCoupon({ percent_off: 100 });

    const placed = await order(user, coupon.code, 'manual');

    expect(placed.status).toBe(201);
    expect(placed.json.data).toMatchObject({
      provider: 'free',
      amount_cents: 0,
      original_cents: 1230,
      discount_cents: 1230,
      status: 'paid',
      pay_url: null,
    });
    const grant = await grantOf(table, user.account.id);
    expect(grant).toMatchObject({
      order_id: placed.json.data.id,
      plan_id: planId,
      quota_bytes: 5 * 1024 ** 2,
    });
  });
});
