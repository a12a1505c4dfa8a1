// The hosted mock cashier in a real headless browser: open the signed link, see plan and amount, click Pay,
// see the order paid (docs/DESIGN.md 7). Needs Debian's chromium; skips itself, saying so, when it is absent.
import type { BrowserContext } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '#lib/platform/log.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { browserMissing, openBrowser } from '#test/support/browser.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const MISSING_BROWSER = browserMissing('the cashier browser test');

configureLogging({ level: 'silent' });
const app = useLocalApp();
let admin: TestAccount;
let user: TestAccount;
let planId: string;

const api = (method: string, path: string, who: TestAccount, body?: object) =>
  app.api(method, path, { headers: who.headers, body });

beforeAll(async () => {
  [admin, user] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  const plan = await api('POST', '/api/v1/admin/plans', admin, { name: 'Pro <yearly>', amount_cents: 1230 });
  planId = plan.data.id;
});

/** pay_url carries the configured base_url; the test server listens on its own port. */
const onTestServer = (payUrl: string) => app.at(payUrl);

async function withBrowser<T>(work: (context: BrowserContext) => Promise<T>): Promise<T> {
  const browser = await openBrowser();
  try {
    return await work(browser.context);
  } finally {
    await browser.close();
  }
}

describe('mock cashier page', () => {
  it('shows the plan and amount, and settles the order when Pay is clicked', async (context) => {
    if (MISSING_BROWSER) context.skip(MISSING_BROWSER);
    // Prepare
    const order = (await api('POST', '/api/v1/orders', user, { plan_id: planId, provider: 'mock' })).data;
    expect(order.pay_url).toContain(`/pay/mock/${order.id}?token=`);

    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      const opened = await page.goto(onTestServer(order.pay_url));
      expect(opened?.status()).toBe(200);
      expect(await page.textContent('#plan')).toBe('Pro <yearly>');
      expect(await page.textContent('#amount')).toBe('¥12.30');
      expect(await page.getAttribute('#status', 'data-status')).toBe('pending');

      // Act
      await Promise.all([page.waitForNavigation(), page.click('#pay')]);

      // Assess
      expect(await page.getAttribute('#status', 'data-status')).toBe('paid');
      expect(await page.textContent('#message')).toBe('Payment received.');
      expect(await page.$('#pay')).toBeNull();
    });
    const after = await api('GET', `/api/v1/orders/${order.id}`, user);
    expect(after.data).toMatchObject({ status: 'paid', pay_url: null });
  }, 60_000);

  it('refuses a link whose signature was tampered with', async (context) => {
    if (MISSING_BROWSER) context.skip(MISSING_BROWSER);
    const order = (await api('POST', '/api/v1/orders', user, { plan_id: planId, provider: 'mock' })).data;
    const tampered = `${onTestServer(order.pay_url).slice(0, -3)}AAA`;
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      const opened = await page.goto(tampered);
      expect(opened?.status()).toBe(401);
      expect(await page.$('#pay')).toBeNull();
    });
    expect((await api('GET', `/api/v1/orders/${order.id}`, user)).data.status).toBe('pending');
  }, 60_000);
});

describe('mock cashier over plain HTTP', () => {
  it("refuses another order's link and a POST with no token, changing nothing", async () => {
    const first = (await api('POST', '/api/v1/orders', user, { plan_id: planId, provider: 'mock' })).data;
    const second = (await api('POST', '/api/v1/orders', user, { plan_id: planId, provider: 'mock' })).data;
    const token = new URL(first.pay_url).searchParams.get('token')!;
    const crossed = await fetch(`${app.url}/pay/mock/${second.id}?token=${encodeURIComponent(token)}`, {
      method: 'POST',
    });
    const bare = await fetch(`${app.url}/pay/mock/${second.id}`, { method: 'POST' });
    expect(crossed.status).toBe(401);
    expect(bare.status).toBe(401);
    expect(crossed.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await api('GET', `/api/v1/orders/${second.id}`, user)).data.status).toBe('pending');
  });
});
