// A plan that grants storage, as a client sees it through the local HTTP server: buy it on the hosted mock
// cashier, watch the quota change in GET /api/v1/usage, upload until the quota answers 507.
import { beforeAll, describe, expect, it } from 'vitest';
import { noisePng } from '#test/integration/files/quota-helpers.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let admin: TestAccount;
let user: TestAccount;

beforeAll(async () => {
  [admin, user] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
});

const api = (method: string, path: string, who: TestAccount, body?: object) =>
  app.api(method, path, { headers: who.headers, body });

async function upload(who: TestAccount, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'shot.png');
  return app.request('POST', '/api/v1/upload', { headers: who.headers, body: form });
}

/** pay_url carries the configured base_url; the test server listens on its own port. */
const onTestServer = (payUrl: string) => app.at(payUrl);

describe('a plan that grants storage', () => {
  it('is bought on the mock cashier, shows in /api/v1/usage, and its quota is enforced with 507', async () => {
    // Prepare: a 30-day plan of 6000 bytes.
    const plan = await api('POST', '/api/v1/admin/plans', admin, {
      name: 'Tiny storage',
      amount_cents: 500,
      quota_bytes: 6000,
      duration_days: 30,
    });
    const before = await api('GET', '/api/v1/usage', user);
    const order = await api('POST', '/api/v1/orders', user, { plan_id: plan.data.id, provider: 'mock' });

    // Act: open the cashier page and press Pay (the form posts back to the same signed URL).
    const cashierUrl = onTestServer(order.data.pay_url);
    const page = await fetch(cashierUrl);
    const paid = await fetch(cashierUrl, { method: 'POST' });
    const paidPage = await paid.text();
    const after = await api('GET', '/api/v1/usage', user);
    const first = await upload(user, noisePng(2500));
    const second = await upload(user, noisePng(2500));
    const third = await upload(user, noisePng(2500));
    const final = await api('GET', '/api/v1/usage', user);

    // Assess
    expect(plan.status).toBe(201);
    expect(before.data).toMatchObject({ used_bytes: 0, file_count: 0, plan: null });
    expect(before.data.quota_bytes).toBeGreaterThan(6000);
    expect(page.status).toBe(200);
    expect(paid.status).toBe(200);
    expect(paidPage).toContain('data-status="paid"');
    expect(after.data).toEqual({
      used_bytes: 0,
      file_count: 0,
      quota_bytes: 6000,
      plan: { id: plan.data.id, name: 'Tiny storage', expires_at: expect.any(String) },
      bandwidth_bytes_used: 0,
      bandwidth_bytes: null,
    });
    const daysLeft = (Date.parse(after.data.plan.expires_at) - Date.now()) / 86_400_000;
    expect(daysLeft).toBeGreaterThan(29.9);
    expect(daysLeft).toBeLessThanOrEqual(30);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(third.status).toBe(507);
    expect(third.body).toEqual({
      code: 507,
      message: 'storage quota exceeded',
      data: { used_bytes: first.body.data.size + second.body.data.size, quota_bytes: 6000 },
    });
    expect(final.data).toMatchObject({
      used_bytes: first.body.data.size + second.body.data.size,
      file_count: 2,
      quota_bytes: 6000,
    });
  });
});
