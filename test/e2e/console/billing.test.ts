// The console's coupon and refund journey in a real Chromium against `npm start` (docs/PAYMENTS-GUIDE.md
// "Coupons", "Refunds"): an administrator makes a coupon in the back office, a user's unknown code is one
// check and one message by the field (gone with the code), the user sees the real one's discount at
// checkout and buys a plan with it on the mock cashier, the administrator refunds the order from the order
// view after a question naming the amount, and the user's quota and order history change. Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the console coupon and refund journey');
const stamp = Date.now().toString(36);
const USER = newAccount('buyer');
const CODE = `HALF${stamp}`.toUpperCase();

useConsoleService(MISSING);

describe('coupons and refunds in the console (npm start, Chromium)', () => {
  it('makes a coupon, buys with it on the mock cashier, refunds it, and the buyer sees the change', async (context) => {
    if (MISSING) context.skip(MISSING);
    // Prepare: a plan on sale and a buyer.
    const plan = await apiCall('POST', '/api/v1/admin/plans', await adminToken(), {
      name: 'Coupon Pro',
      amount_cents: 990,
      quota_bytes: 20 * 1024 ** 3,
      duration_days: 30,
    });
    expect(plan.status).toBe(201);
    await registerAccount(USER);

    // The administrator makes a coupon in the back office.
    await page.goto(`${service.url}/`);
    await logIn(ADMIN.username, ADMIN.password);
    await page.getByRole('link', { name: 'Coupons' }).click();
    await heading('Coupons');
    await page.getByLabel('Code').fill(CODE);
    await page.getByLabel('Percent off (1 to 100)').fill('50');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    await page.getByRole('cell', { name: CODE, exact: true }).waitFor();
    await checkPage('admin-coupons');
    await logOut();

    // The buyer sees the discount before paying, and pays the discounted price on the mock cashier.
    await logIn(USER.username, USER.password);
    await page.getByRole('link', { name: 'Plans & usage' }).click();
    await heading('Plans and usage');
    const usage = page.locator('#usage-text');
    await usage.waitFor();
    expect(await usage.textContent()).not.toContain('20.0 GiB');
    // An unknown code: one check for the whole catalogue, one message by the field, gone with the code.
    const checks: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/coupons/validate')) checks.push(request.url());
    });
    await page.getByLabel('Coupon code').fill('nosuchcode');
    await page.getByRole('button', { name: 'Apply coupon' }).click();
    await page.getByText('No usable coupon named NOSUCHCODE', { exact: true }).waitFor();
    expect(checks).toHaveLength(1);
    expect(await page.getByText(/NOSUCHCODE|nosuchcode:/).count()).toBe(1);
    await page.getByLabel('Coupon code').fill('');
    await page.getByText('No usable coupon named NOSUCHCODE').waitFor({ state: 'detached' });
    await page.getByLabel('Coupon code').fill(CODE.toLowerCase());
    await page.getByRole('button', { name: 'Apply coupon' }).click();
    await page.getByText(`With ${CODE.toLowerCase()}: ¥4.95 (¥4.95 off)`).waitFor();
    expect(checks).toHaveLength(2);
    await page.getByRole('button', { name: 'Buy Coupon Pro' }).click();
    const order = page.getByRole('region', { name: /Order for Coupon Pro: ¥4.95/ });
    await order.getByText('Order status: pending').waitFor();
    const [cashier] = await Promise.all([
      page.context().waitForEvent('page'),
      order.getByRole('link', { name: 'Open the mock cashier' }).click(),
    ]);
    await cashier.waitForLoadState();
    await Promise.all([cashier.waitForNavigation(), cashier.click('#pay')]);
    expect(await cashier.getAttribute('#status', 'data-status')).toBe('paid');
    await cashier.close();
    await order.getByText('Order status: paid').waitFor();
    await poll(() => usage.textContent()).toContain('of 20.0 GiB');
    await checkPage('plans-coupon');
    await logOut();

    // The administrator refunds it from the order view.
    await logIn(ADMIN.username, ADMIN.password);
    await page.getByRole('link', { name: 'Orders' }).click();
    await heading('Orders');
    const row = page.getByRole('row').filter({ hasText: 'Coupon Pro' }).filter({ hasText: 'paid' });
    await row.getByLabel(/^Reason/).fill('changed my mind');
    await row.getByRole('button', { name: /^Refund order/ }).click();
    // No amount typed: the whole order, and the console says so before anything is refunded.
    await row
      .getByText(new RegExp(`^Refund ¥4\\.95 \\(all that is left\\) of order \\S+ to ${USER.username}\\?$`))
      .waitFor();
    await row.getByRole('button', { name: /^Confirm refund order/ }).click();
    await page
      .getByText(/refunded$/)
      .first()
      .waitFor();
    const refunded = page.getByRole('row').filter({ hasText: 'Coupon Pro' }).filter({ hasText: 'refunded' });
    await refunded.getByText('¥4.95 (¥4.95 succeeded)').waitFor();
    await checkPage('admin-orders-refunded');
    await logOut();

    // The buyer's quota is back to the default and the history shows the refund.
    await logIn(USER.username, USER.password);
    await page.getByRole('link', { name: 'Plans & usage' }).click();
    await heading('Plans and usage');
    await page.locator('#usage-text').waitFor();
    await poll(() => page.locator('#usage-text').textContent()).not.toContain('20.0 GiB');
    const history = page.getByRole('row').filter({ hasText: 'Coupon Pro' });
    await history.getByText('refunded', { exact: true }).waitFor();
    await history.getByText('¥4.95 (¥4.95 succeeded)').waitFor();
    expect(await history.textContent()).toContain(`${CODE}: ¥4.95 off`);
  }, 240_000);

  itRanWithoutPolicyViolations(MISSING);
});
