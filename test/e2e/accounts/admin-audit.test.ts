// Issue 39: every administrator action is in the audit log: who, when, what, on what, from where, and how it
// ended. An administrator's journey through the local server (accounts, files, moderation, plans, coupons,
// orders, payment settings) is then read back from GET /api/v1/admin/audit, each action once, filtered.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestAccount, TEST_PASSWORD } from '#test/support/accounts.ts';
import { buildMultipart, makePatternPng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
const tag = () => randomBytes(4).toString('hex');

async function upload(token: string, seed: number): Promise<string> {
  const form = buildMultipart([
    { name: 'file', filename: 'a.png', contentType: 'image/png', data: makePatternPng(24, 24, seed) },
  ]);
  const answer = await app.api('POST', '/api/v1/upload', {
    token,
    body: form.body,
    headers: { 'content-type': form.contentType },
  });
  expect(answer.code, JSON.stringify(answer)).toBe(0);
  return answer.data.id as string;
}

describe('the audit log of an administrator journey', () => {
  it('lists each action with who, what, on what, from where and its outcome; filters by actor, action and target', async () => {
    // Prepare: an administrator, a user with two files and a paid order.
    const [admin, user] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
    // A refund asks for an Idempotency-Key (docs/PAYMENTS-GUIDE.md); the other routes ignore it.
    const as = (method: string, path: string, body?: unknown) =>
      app.api(method, path, {
        token: admin.token,
        headers: { 'idempotency-key': randomBytes(8).toString('hex') },
        ...(body === undefined ? {} : { body }),
      });
    const [fileA, fileB] = [
      await upload(user.token, Math.floor(Math.random() * 1e6)),
      await upload(user.token, 7 + Math.floor(Math.random() * 1e6)),
    ];

    // Act: the journey, each step checked as it goes.
    const created = await as('POST', '/api/v1/admin/accounts', {
      username: `made_${tag()}`,
      email: `made_${tag()}@example.test`,
      password: 'a-made-password-1',
      current_password: TEST_PASSWORD,
    });
    expect(created.code).toBe(0);
    const madeId = created.data.id as string;
    const steps: Array<[string, string, unknown, string, string]> = [
      [
        'PATCH',
        `/api/v1/admin/accounts/${madeId}`,
        { status: 'disabled', current_password: TEST_PASSWORD },
        'accounts.update',
        `accounts:${madeId}`,
      ],
      ['PATCH', `/api/v1/admin/files/${fileA}`, { permission: 'public' }, 'files.update', `files:${fileA}`],
      ['DELETE', `/api/v1/admin/files/${fileB}`, undefined, 'files.delete', `files:${fileB}`],
    ];
    for (const [method, path, body] of steps) {
      const answer = await as(method, path, body);
      expect(answer.code, `${path} ${JSON.stringify(answer)}`).toBe(0);
    }
    // Refused (the account has no second factor): recorded with the status it answered.
    const reset = await as('POST', `/api/v1/admin/accounts/${madeId}/totp/reset`, {
      current_password: TEST_PASSWORD,
    });
    expect(reset.code).toBe(409);
    const reviewed = await as('POST', `/api/v1/admin/moderation/${fileA}`, { action: 'approve' });
    expect(reviewed.code).toBe(0);
    const plan = await as('POST', '/api/v1/admin/plans', { name: `Plan ${tag()}`, amount_cents: 500 });
    expect(plan.code).toBe(0);
    const planId = plan.data.id as string;
    const coupon = await as('POST', '/api/v1/admin/coupons', {
      code: `C${tag()}`.toUpperCase(),
      percent_off: 10,
    });
    expect(coupon.code, JSON.stringify(coupon)).toBe(0);
    const couponId = coupon.data.id as string;
    const order = await app.api('POST', '/api/v1/orders', {
      token: user.token,
      body: { plan_id: planId, provider: 'manual' },
    });
    expect(order.code, JSON.stringify(order)).toBe(0);
    const orderId = order.data.id as string;
    const later: Array<[string, string, unknown, string, string]> = [
      ['PATCH', `/api/v1/admin/plans/${planId}`, { active: false }, 'plans.update', `plans:${planId}`],
      [
        'PATCH',
        `/api/v1/admin/coupons/${couponId}`,
        { active: false },
        'coupons.update',
        `coupons:${couponId}`,
      ],
      ['DELETE', `/api/v1/admin/coupons/${couponId}`, undefined, 'coupons.delete', `coupons:${couponId}`],
      ['POST', `/api/v1/admin/orders/${orderId}/pay`, {}, 'orders.pay', `orders:${orderId}`],
      [
        'POST',
        `/api/v1/admin/orders/${orderId}/refund`,
        { reason: 'audit journey' },
        'orders.refund',
        `orders:${orderId}`,
      ],
    ];
    for (const [method, path, body] of later) {
      const answer = await as(method, path, body);
      expect(answer.code, `${path} ${JSON.stringify(answer)}`).toBe(0);
    }
    const ban = await as('POST', '/api/v1/admin/bans', { cidr: '198.51.100.0/24', reason: 'audit journey' });
    expect(ban.code, JSON.stringify(ban)).toBe(0);
    const banId = ban.data.id as string;
    expect((await as('DELETE', `/api/v1/admin/bans/${banId}`)).code).toBe(0);
    // An action that fails is recorded too, with the status it failed with.
    const missing = await as('DELETE', '/api/v1/admin/blocklist/no-such-entry');
    expect(missing.code).toBe(404);

    // Assess: the administrator's events, newest first, each action once.
    const read = async (query: string) => {
      const events: Array<Record<string, unknown>> = [];
      let cursor: string | undefined;
      do {
        const page = await as(
          'GET',
          `/api/v1/admin/audit?limit=100&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.code).toBe(0);
        events.push(...page.data.items);
        cursor = page.data.next_cursor ?? undefined;
      } while (cursor);
      return events;
    };
    const mine = await read(`actor_id=${admin.account.id}`);
    const expected = [
      ['accounts.create', `accounts:${madeId}`, 201],
      ...steps.map(([, , , action, target]) => [action, target, 200]),
      ['accounts.totp.reset', `accounts:${madeId}`, 409],
      ['moderation.approve', `file:${fileA}`, 200],
      ['plans.create', `plans:${planId}`, 201],
      ['coupons.create', `coupons:${couponId}`, 201],
      ...later.map(([, , , action, target]) => [action, target, 200]),
      ['bans.create', `bans:${banId}`, 201],
      ['bans.delete', `bans:${banId}`, 200],
      ['blocklist.delete', 'blocklist:no-such-entry', 404],
    ];
    expect(
      mine.map((event) => [event.action, event.target, event.status]).reverse(),
      JSON.stringify(mine),
    ).toEqual(expected);
    for (const event of mine) {
      expect(event.actor_id).toBe(admin.account.id);
      expect(event.from).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
      expect(Date.parse(String(event.at))).not.toBeNaN();
    }
    // What was changed is named, never its values: the passwords sent are nowhere in the log.
    const creation = mine.find((event) => event.action === 'accounts.create');
    expect(creation?.details).toMatchObject({
      fields: ['current_password', 'email', 'password', 'username'],
    });
    expect(JSON.stringify(mine)).not.toContain(TEST_PASSWORD);
    expect(JSON.stringify(mine)).not.toContain('a-made-password-1');

    const couponsOnly = await read(`actor_id=${admin.account.id}&action=coupons.`);
    expect(couponsOnly.map((event) => event.action).sort()).toEqual([
      'coupons.create',
      'coupons.delete',
      'coupons.update',
    ]);
    const onTheOrder = await read(`target=orders:${orderId}`);
    expect(onTheOrder.map((event) => event.action).reverse()).toEqual(['orders.pay', 'orders.refund']);
  });
});
