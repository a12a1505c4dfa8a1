// The console's wording, flows and lists as a newcomer meets them, in a real Chromium against `npm start`
// (through harness.ts): one login form (its "Administrator account" box unticked, the account still finds
// its door), a list that shows grey placeholders while it loads and a sentence with a hint when empty, the direct-upload
// limit on the tokens page, plans that grant no storage said as such, a pending order paid later or
// cancelled from the orders list, two-factor's off state as a warning with recovery codes copied and
// downloaded, and the back office's orders naming the buyer and asking before a write-off. Skips itself,
// saying why, when Chromium is absent.
import { readFileSync } from 'node:fs';
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  consoleSessionToken,
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

const MISSING = browserMissing('the console wording journeys');
const RUN = Date.now().toString(36);
const USER = newAccount('newbie', 'newcomer password 1');
const QUOTA_PLAN = `Big box ${RUN}`;
const PLAIN_PLAN = `Supporter ${RUN}`;
/** The user's manual order the back office writes off. */
let manualOrderId = '';

useConsoleService(MISSING);

const forgetDevices = () =>
  page.evaluate(() =>
    (globalThis as unknown as { localStorage: { removeItem(key: string): void } }).localStorage.removeItem(
      'console.devices',
    ),
  );

function openFromMenu(link: string) {
  return page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: link, exact: true })
    .click();
}

describe('the console as a newcomer meets it (npm start, Chromium)', () => {
  it('signs administrators and users in through one form, the account choosing the door', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/#/login`);
    await heading('Log in');
    expect(await page.getByLabel('Administrator account').isChecked()).toBe(false);

    // An administrator this browser never saw, the box unticked: the users' door refuses, the
    // administrators' door admits.
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await logOut();

    // A wrong password of an account this browser never saw: both doors refuse, and the form says so once,
    // in the words it uses for an unknown name.
    await forgetDevices();
    await logIn(USER.username, 'not the password');
    await page.getByRole('alert').getByText('Invalid username or password').waitFor();
    expect(await page.getByRole('alert').count()).toBe(1);
    await logIn('nobody-here', 'not the password');
    await page.getByRole('alert').getByText('Invalid username or password').waitFor();

    await logIn(USER.username, USER.password);
    await heading('My files');
  }, 180_000);

  it('shows placeholders while a list loads, then says it is empty and what to do; and the upload limit', async (context) => {
    if (MISSING) context.skip(MISSING);
    // A slow network: the tokens listing answers after two seconds.
    let release: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/v1/tokens', async (route) => {
      if (route.request().method() === 'GET') await answered;
      await route.fallback();
    });
    await openFromMenu('API tokens');
    await heading('API tokens');
    await page.locator('.skeleton-line').first().waitFor();
    expect(await page.locator('.skeleton-line').count()).toBeGreaterThan(1);
    expect(await page.getByText('No API tokens yet.').count()).toBe(0);
    release();
    await page.getByText('No API tokens yet.').waitFor();
    await page.getByText(/Create one above for PicGo/).waitFor();
    expect(await page.locator('.skeleton-line').count()).toBe(0);
    await page.unroute('**/api/v1/tokens');

    // The direct-upload limit, and where larger files go.
    const limit = page.locator('#upload-limit');
    expect(await limit.textContent()).toContain('4.0 MiB');
    expect(await limit.textContent()).toContain('My files');
    await checkPage('tokens-empty');
  }, 180_000);

  it('says what a plan without a quota does, and pays or cancels a pending order from the list', async (context) => {
    if (MISSING) context.skip(MISSING);
    const admin = await adminToken();
    for (const body of [
      { name: QUOTA_PLAN, amount_cents: 990, quota_bytes: 10 * 1024 ** 3, duration_days: 30 },
      { name: PLAIN_PLAN, amount_cents: 100 },
    ]) {
      expect((await apiCall('POST', '/api/v1/admin/plans', admin, body)).status).toBe(201);
    }
    await openFromMenu('Plans & usage');
    await heading('Plans and usage');
    const plain = page.getByRole('listitem').filter({ hasText: PLAIN_PLAN });
    await plain.getByText('¥1.00 · no storage change (keeps your current quota)').waitFor();
    expect(await plain.textContent()).not.toContain('unlimited');
    await page
      .getByRole('listitem')
      .filter({ hasText: QUOTA_PLAN })
      .getByText('¥9.90 · 10.0 GiB quota, for 30 days')
      .waitFor();
    await page.getByText('No orders yet.').waitFor();

    // An order left pending (the page closed): its row pays it again, with a fresh cashier link.
    await page.getByRole('button', { name: `Buy ${QUOTA_PLAN}` }).click();
    await page.getByRole('region', { name: new RegExp(`Order for ${QUOTA_PLAN}`) }).waitFor();
    await openFromMenu('API tokens');
    await heading('API tokens');
    await openFromMenu('Plans & usage');
    await heading('Plans and usage');
    expect(await page.getByRole('region', { name: new RegExp(`Order for ${QUOTA_PLAN}`) }).count()).toBe(0);
    const pending = page.getByRole('row').filter({ hasText: QUOTA_PLAN });
    await pending.getByRole('button', { name: `Pay order for ${QUOTA_PLAN} (¥9.90)` }).click();
    const panel = page.getByRole('region', { name: new RegExp(`Order for ${QUOTA_PLAN}`) });
    // Waiting for a payment is not shown as done (green): a neutral notice until the order is paid.
    await panel.locator('.notice-info').getByText('Order status: pending').waitFor();
    expect(await panel.locator('.notice-success').count()).toBe(0);
    const [cashier] = await Promise.all([
      page.context().waitForEvent('page'),
      panel.getByRole('link', { name: 'Open the mock cashier' }).click(),
    ]);
    await cashier.waitForLoadState();
    await Promise.all([cashier.waitForNavigation(), cashier.click('#pay')]);
    await cashier.close();
    await panel.locator('.notice-success').getByText('Order status: paid').waitFor();
    await poll(() => pending.getByRole('button', { name: /^Pay order/ }).count()).toBe(0);

    // Another left pending is cancelled from its row, after the page asks.
    await page.getByRole('button', { name: `Buy ${PLAIN_PLAN}` }).click();
    const row = page.getByRole('row').filter({ hasText: PLAIN_PLAN });
    await row.getByRole('button', { name: `Cancel order for ${PLAIN_PLAN} (¥1.00)` }).click();
    await row.getByText(`Cancel the order for ${PLAIN_PLAN} (¥1.00)?`).waitFor();
    await checkPage('plans-cancel-asked');
    await row.getByRole('button', { name: /^Cancel order / }).click();
    await page.getByText(`The order for ${PLAIN_PLAN} (¥1.00) is cancelled`).waitFor();
    await row.getByRole('cell', { name: 'cancelled', exact: true }).waitFor();
    expect(await page.getByRole('region', { name: new RegExp(`Order for ${PLAIN_PLAN}`) }).count()).toBe(0);
    const orders = await apiCall('GET', '/api/v1/orders', await consoleSessionToken());
    expect(orders.data.items.map((order: { status: string }) => order.status).sort()).toEqual([
      'cancelled',
      'paid',
    ]);

    // A manual order left for the back office (below).
    const manual = await apiCall('POST', '/api/v1/orders', await consoleSessionToken(), {
      plan_id: orders.data.items.find((order: { plan_name: string }) => order.plan_name === PLAIN_PLAN)
        .plan_id,
      provider: 'manual',
    });
    expect(manual.status).toBe(201);
    manualOrderId = manual.data.id;
  }, 180_000);

  it('shows two-factor off as a warning and on as success, with recovery codes copied and downloaded', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
    await openFromMenu('Security');
    await heading('Security');
    const totp = page.getByRole('region', { name: 'Two-factor authentication (TOTP)' });
    await totp
      .locator('.notice-warning')
      .getByText(/Two-factor authentication is off/)
      .waitFor();
    expect(await totp.locator('.notice-success').count()).toBe(0);
    await page.getByText('No passkeys yet.').waitFor();

    await totp.getByLabel('Current password').fill(USER.password);
    await totp.getByRole('button', { name: 'Set up' }).click();
    const secret = (await totp.locator('#totp-secret').textContent())!;
    await totp.getByLabel('Code from the app').fill(await generate({ secret }));
    await totp.getByRole('button', { name: 'Turn on' }).click();
    await totp.locator('.notice-success').getByText('Two-factor authentication is on.').waitFor();
    expect(await totp.locator('.notice-warning').count()).toBe(0);
    const recovery = page.getByRole('region', { name: 'Recovery codes' });
    const codes = await recovery.locator('code').allTextContents();
    expect(codes).toHaveLength(10);
    const expected = `${codes.join('\n')}\n`;

    await recovery.getByRole('button', { name: 'Copy the codes' }).click();
    await recovery.getByText('10 recovery codes copied, one a line.').waitFor();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).toBe(expected);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      recovery.getByRole('link', { name: 'Download recovery-codes.txt' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('recovery-codes.txt');
    expect(readFileSync((await download.path())!, 'utf8')).toBe(expected);
    await checkPage('security-recovery-codes');
    await logOut();
  }, 180_000);

  it("names the buyer in the back office's orders and asks before a write-off", async (context) => {
    if (MISSING) context.skip(MISSING);
    const id = manualOrderId;
    const admin = await adminToken();
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await openFromMenu('Orders');
    await heading('Orders');
    const row = page
      .getByRole('row')
      .filter({ hasText: USER.username })
      .filter({ hasText: PLAIN_PLAN })
      .filter({ hasText: 'manual' });
    await row.getByRole('cell', { name: USER.username, exact: true }).waitFor();

    await row.getByRole('button', { name: `Write off order ${id}` }).click();
    await row.getByText(`Mark order ${id} of ${USER.username} paid: ¥1.00?`).waitFor();
    await checkPage('admin-orders-confirm');
    await row.getByRole('button', { name: `Keep pending order ${id}` }).click();
    await row.getByRole('button', { name: `Write off order ${id}` }).waitFor();
    await poll(async () => (await orderStatus(admin, id)) ?? '').toBe('pending');

    await row.getByRole('button', { name: `Write off order ${id}` }).click();
    await row.getByRole('button', { name: `Mark paid order ${id}` }).click();
    await page.getByText(`Order ${id} of ${USER.username} written off as paid`).waitFor();
    await poll(async () => (await orderStatus(admin, id)) ?? '').toBe('paid');
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});

async function orderStatus(admin: string, id: string): Promise<string | undefined> {
  const list = await apiCall('GET', '/api/v1/admin/orders?limit=100', admin);
  return list.data.items.find((order: { id: string }) => order.id === id)?.status;
}
