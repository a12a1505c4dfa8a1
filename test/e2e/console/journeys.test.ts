// The web console's main journeys in a real Chromium against `npm start` (scripts/start.ts in its own
// process, each function group in its own process, DynamoDB Local and s3rver of its own): register with the
// e-mail code, log in, upload, tokens, TOTP, buying a plan through the mock cashier, and an administrator
// disabling an account. Every page is screenshotted at 1280 and 390 px and checked with axe-core.
// Skips itself, saying why, when Chromium is absent. The account settings and back-office forms are driven
// in settings.test.ts; both share harness.ts.
import { crc32 } from 'node:zlib';
import { generate } from 'otplib';
import { encode } from 'uqr';
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  itRanWithoutPolicyViolations,
  mailedCode,
  newAccount,
  page,
  poll,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console journeys');
const USER = newAccount('reader');

let planId: string;

useConsoleService(MISSING);

/** A PNG over the direct upload limit (a padding text chunk), so the console must presign it. */
function largePng(bytes: number): Buffer {
  const small = makePng(40, 30, [20, 120, 200]);
  const data = Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.alloc(bytes, 0x61)]);
  const typeAndData = Buffer.concat([Buffer.from('tEXt', 'latin1'), data]);
  const chunk = Buffer.alloc(typeAndData.length + 8);
  chunk.writeUInt32BE(data.length, 0);
  typeAndData.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(typeAndData), typeAndData.length + 4);
  const iend = small.length - 12;
  return Buffer.concat([small.subarray(0, iend), chunk, small.subarray(iend)]);
}

describe('web console journeys (npm start, Chromium)', () => {
  it('serves the console at / with its CSP, registers with the e-mail code and shows field errors in words', async (context) => {
    if (MISSING) context.skip(MISSING);
    const opened = await page.goto(`${service.url}/`);
    const policy = opened?.headers()['content-security-policy'] ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:\/\/(?!127\.0\.0\.1)/);
    await heading('Log in');
    await checkPage('login');

    await page.getByRole('link', { name: 'Register' }).click();
    await heading('Register');
    await page.getByLabel('E-mail', { exact: true }).fill(USER.email);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText(`A code was sent to ${USER.email}`).waitFor();
    await page.getByLabel('E-mail code').fill(await mailedCode(USER.email));
    await page.getByLabel('Username').fill('no spaces allowed');
    await page.getByLabel('Password', { exact: true }).fill(USER.password);
    await checkPage('register');
    await page.getByRole('button', { name: 'Create account' }).click();

    // The API's words for the username sit next to that field, tied to it for screen readers.
    const username = page.getByLabel('Username');
    await poll(() => username.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await username.getAttribute('aria-describedby'))!.split(' ').at(-1)!;
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).not.toBe('');

    await username.fill(USER.username);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('My files');
    expect(await page.getByText(USER.username, { exact: true }).count()).toBeGreaterThan(0);
  }, 180_000);

  it('logs out and logs in again', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await heading('Log in');
    await page.getByLabel('Username or e-mail').fill(USER.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('My files');
  }, 180_000);

  it('uploads by the file picker, direct and presigned, and shows the stored image in the grid', async (context) => {
    if (MISSING) context.skip(MISSING);
    const picker = page.locator('#file-picker');
    await picker.setInputFiles({
      name: 'cat.png',
      mimeType: 'image/png',
      buffer: makePng(64, 48, [200, 80, 40]),
    });
    const grid = page.getByRole('list', { name: 'My files' });
    const card = grid.getByRole('button', { name: 'cat.png', exact: true });
    await card.waitFor();
    // The thumbnail is the stored image's rendition, decoded by the browser (its width as drawn follows the
    // tile's `sizes`, web/src/file-links.tsx).
    const thumbnail = card.getByRole('img', { name: 'cat.png' });
    await poll(() =>
      thumbnail.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0),
    ).toBe(true);
    expect(
      await thumbnail.evaluate((image) => (image as unknown as { currentSrc: string }).currentSrc),
    ).toMatch(/\/i\/.+\?p=thumb$/);

    // Over the direct limit: presign, PUT straight to storage (s3rver), confirm.
    await picker.setInputFiles({
      name: 'large.png',
      mimeType: 'image/png',
      buffer: largePng(4.5 * 1024 * 1024),
    });
    const large = grid.getByRole('button', { name: 'large.png', exact: true });
    await large.waitFor();
    await poll(() =>
      large
        .getByRole('img', { name: 'large.png' })
        .evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth > 0),
    ).toBe(true);

    // Dropped and pasted files upload too (the events a browser fires, with real files in them).
    // Different bytes each: the same bytes twice would be one file (uploads are deduplicated).
    const dropBytes = [...makePng(24, 18, [10, 160, 90])];
    const pasteBytes = [...makePng(24, 18, [90, 10, 160])];
    await page.evaluate(
      ([dropData, pasteData]) => {
        const browser = globalThis as unknown as {
          DataTransfer: new () => { items: { add(file: unknown): void } };
          File: new (parts: unknown[], name: string, options: object) => unknown;
          Uint8Array: typeof Uint8Array;
          DragEvent: new (type: string, init: object) => unknown;
          ClipboardEvent: new (type: string, init: object) => unknown;
          document: { querySelector(selector: string): { dispatchEvent(event: unknown): void } };
          dispatchEvent(event: unknown): void;
        };
        const file = (name: string, data: number[]) =>
          new browser.File([new browser.Uint8Array(data)], name, { type: 'image/png' });
        const dropped = new browser.DataTransfer();
        dropped.items.add(file('dropped.png', dropData));
        browser.document
          .querySelector('.dropzone')
          .dispatchEvent(
            new browser.DragEvent('drop', { dataTransfer: dropped, bubbles: true, cancelable: true }),
          );
        const pasted = new browser.DataTransfer();
        pasted.items.add(file('pasted.png', pasteData));
        browser.dispatchEvent(
          new browser.ClipboardEvent('paste', { clipboardData: pasted, cancelable: true }),
        );
      },
      [dropBytes, pasteBytes] as const,
    );
    for (const name of ['dropped.png', 'pasted.png']) {
      await grid.getByRole('button', { name, exact: true }).waitFor();
    }

    // The file's lightbox: its links in each format, and who can see it.
    await card.click();
    const lightbox = page.getByRole('dialog');
    const markdown = await lightbox.getByLabel('Markdown link of cat.png').inputValue();
    expect(markdown).toMatch(
      new RegExp(`^!\\[cat\\.png\\]\\(${service.url}/i/\\d{4}/\\d{2}/\\d{2}/[^)]+\\.png\\)$`),
    );
    expect(await lightbox.getByLabel('BBCode link of cat.png').inputValue()).toMatch(
      /^\[img\]http.*\[\/img\]$/,
    );

    await lightbox.getByLabel('Visibility').selectOption('public');
    await lightbox.getByText('Now public (in the gallery)').waitFor();
    await page.keyboard.press('Escape');
    await checkPage('files');

    await page.getByRole('link', { name: 'Gallery' }).click();
    await heading('Public gallery');
    await page.getByRole('img', { name: 'cat.png' }).waitFor();
    expect(await page.getByRole('img', { name: 'large.png' }).count()).toBe(0);
    await checkPage('gallery');
  }, 180_000);

  it('creates an API token shown once with a PicGo configuration, says when to retry a 429, and revokes it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('link', { name: 'API tokens' }).click();
    await heading('API tokens');
    await page.getByLabel('Token name').fill('PicGo laptop');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('Token', { exact: true }).inputValue();
    expect(token).toMatch(/^ut_/);
    const picgo = JSON.parse(await page.getByLabel(/PicGo configuration/).inputValue());
    expect(picgo.picBed['web-uploader']).toMatchObject({
      url: `${service.url}/api/v1/upload`,
      paramName: 'file',
      jsonPath: 'data.url',
    });
    expect(JSON.parse(picgo.picBed['web-uploader'].customHeader)).toEqual({
      Authorization: `Bearer ${token}`,
    });
    await page.getByRole('cell', { name: 'PicGo laptop', exact: true }).waitFor();
    // The token it showed works as PicGo would use it.
    expect((await apiCall('GET', '/api/v1/files', token)).status).toBe(200);
    await checkPage('tokens');

    // A 429 says when to retry.
    await page.route('**/api/v1/tokens', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 429,
            headers: { 'content-type': 'application/json', 'retry-after': '30' },
            body: JSON.stringify({ code: 429, message: 'Too many requests', data: { retry_after: 30 } }),
          })
        : route.fallback(),
    );
    await page.getByLabel('Token name').fill('second');
    await page.getByRole('button', { name: 'Create token' }).click();
    await poll(() => page.getByRole('alert').first().textContent()).toMatch(
      /^Too many requests\. Try again in \d+ s \(at .+\)\.$/,
    );
    await page.unroute('**/api/v1/tokens');

    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('button', { name: 'Revoke PicGo laptop' }).click();
    await page.getByText('Token PicGo laptop revoked').waitFor();
    expect(await page.getByRole('cell', { name: 'PicGo laptop', exact: true }).count()).toBe(0);
    expect((await apiCall('GET', '/api/v1/files', token)).status).toBe(401);
  }, 180_000);

  it('asks for the password again when the session ends, keeping what was typed', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByLabel('Token name').fill('kept across the login');
    const sessionToken = await consoleSessionToken();
    expect((await apiCall('POST', '/auth/logout', sessionToken, {})).status).toBe(200);

    await page.getByRole('button', { name: 'Create token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your session has ended' });
    await dialog.waitFor();
    await dialog.getByLabel('Password').fill(USER.password);
    await dialog.getByRole('button', { name: 'Log in', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByLabel('Token name').inputValue()).toBe('kept across the login');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('cell', { name: 'kept across the login', exact: true }).waitFor();
  }, 180_000);

  it('turns TOTP on with a code computed from the QR secret, is told that code is spent at the login, and logs in with a recovery code', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('link', { name: 'Security' }).click();
    await heading('Security');
    const totp = page.getByRole('region', { name: 'Two-factor authentication (TOTP)' });
    await totp.getByLabel('Current password').fill(USER.password);
    await totp.getByRole('button', { name: 'Set up' }).click();
    await totp.getByRole('img', { name: 'QR code of the authenticator secret' }).waitFor();
    // The QR drawn is exactly the otpauth URI the API gave, and the code comes from that URI's secret.
    const uri = (await totp
      .getByRole('link', { name: /authenticator app on this device/ })
      .getAttribute('href'))!;
    const drawn = (await totp.locator('svg.qr path').getAttribute('d'))!;
    const darkModules = new Set([...drawn.matchAll(/M(\d+) (\d+)h1v1h-1z/g)].map((m) => `${m[1]},${m[2]}`));
    const expected = new Set(
      encode(uri, { border: 2 }).data.flatMap((row, y) =>
        row.flatMap((dark, x) => (dark ? [`${x},${y}`] : [])),
      ),
    );
    expect(darkModules).toEqual(expected);
    const secret = new URL(uri).searchParams.get('secret')!;
    expect(await totp.locator('#totp-secret').textContent()).toBe(secret);
    const enableCode = await generate({ secret });
    await totp.getByLabel('Code from the app').fill(enableCode);
    await checkPage('security-setup');
    await totp.getByRole('button', { name: 'Turn on' }).click();
    const recovery = page.getByRole('region', { name: 'Recovery codes' });
    await recovery.waitFor();
    const codes = await recovery.locator('code').allTextContents();
    expect(codes).toHaveLength(10);
    await page.getByText('Two-factor authentication is on.').waitFor();
    await checkPage('security');

    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await heading('Log in');
    await page.getByLabel('Username or e-mail').fill(USER.username);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    // The code that just turned TOTP on is spent: said once, by the field, as "already used", not "invalid".
    await page.getByLabel('Authentication code or recovery code').fill(enableCode);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('was already used; wait for the next code').waitFor();
    expect(await page.getByText(/already used/).count()).toBe(1);
    await page.getByLabel('Authentication code or recovery code').fill(codes[0]!);
    await checkPage('login-challenge');
    await page.getByRole('button', { name: 'Verify' }).click();
    await heading('My files');
  }, 180_000);

  it('buys a plan through the mock cashier and sees the order paid and the quota change', async (context) => {
    if (MISSING) context.skip(MISSING);
    const admin = await adminToken();
    const plan = await apiCall('POST', '/api/v1/admin/plans', admin, {
      name: 'Console Pro',
      description: 'Ten gibibytes for a month',
      amount_cents: 990,
      quota_bytes: 10 * 1024 ** 3,
      duration_days: 30,
    });
    expect(plan.status).toBe(201);
    planId = plan.data.id;

    await page.getByRole('link', { name: 'Plans & usage' }).click();
    await heading('Plans and usage');
    const usage = page.locator('#usage-text');
    await usage.waitFor();
    expect(await usage.textContent()).not.toContain('10.0 GiB');

    // A scan-to-pay channel's order (answered here as the channel would leave it: pending, with its
    // payment code) shows that code as a QR image of exactly its text.
    const channelCode = 'weixin://wxpay/bizpayurl?pr=console-test';
    const channelOrder = {
      id: 'channelorder1',
      user_id: 'u',
      plan_id: planId,
      plan_name: 'Console Pro',
      amount_cents: 990,
      currency: 'CNY',
      provider: 'channel_b',
      status: 'pending',
      trade_no: null,
      pay_url: null,
      qr_code: channelCode,
      created_at: '2026-01-01T00:00:00+00:00',
      updated_at: '2026-01-01T00:00:00+00:00',
      paid_at: null,
    };
    const envelope = (status: number, data: unknown) => ({
      status,
      contentType: 'application/json',
      body: JSON.stringify({ code: 0, message: 'ok', data }),
    });
    await page.route('**/api/v1/orders', (route) =>
      route.request().method() === 'POST' ? route.fulfill(envelope(201, channelOrder)) : route.fallback(),
    );
    await page.route('**/api/v1/orders/channelorder1', (route) => route.fulfill(envelope(200, channelOrder)));
    await page.getByRole('button', { name: 'Buy Console Pro' }).click();
    const channelQr = page.getByRole('img', { name: 'Payment QR code for Console Pro' });
    await channelQr.waitFor();
    const channelModules = new Set(
      [...((await channelQr.locator('path').getAttribute('d')) ?? '').matchAll(/M(\d+) (\d+)h1v1h-1z/g)].map(
        (m) => `${m[1]},${m[2]}`,
      ),
    );
    expect(channelModules).toEqual(
      new Set(
        encode(channelCode, { border: 2 }).data.flatMap((row, y) =>
          row.flatMap((dark, x) => (dark ? [`${x},${y}`] : [])),
        ),
      ),
    );
    await page.unroute('**/api/v1/orders');
    await page.unroute('**/api/v1/orders/channelorder1');

    await page.getByRole('button', { name: 'Buy Console Pro' }).click();
    const order = page.getByRole('region', { name: /Order for Console Pro/ });
    await order.getByText('Order status: pending').waitFor();
    await checkPage('plans-order');

    const [cashier] = await Promise.all([
      page.context().waitForEvent('page'),
      order.getByRole('link', { name: 'Open the mock cashier' }).click(),
    ]);
    await cashier.waitForLoadState();
    expect(await cashier.textContent('#plan')).toBe('Console Pro');
    await Promise.all([cashier.waitForNavigation(), cashier.click('#pay')]);
    expect(await cashier.getAttribute('#status', 'data-status')).toBe('paid');
    await cashier.close();

    // The console polls the order and then shows the new quota.
    await order.getByText('Order status: paid').waitFor();
    await poll(() => usage.textContent()).toContain('of 10.0 GiB');
    expect(await usage.textContent()).toContain('plan Console Pro');
    await checkPage('plans');
  }, 180_000);

  it('lets an administrator find and disable an account, which then cannot log in', async (context) => {
    if (MISSING) context.skip(MISSING);
    const manual = await apiCall('POST', '/api/v1/orders', await consoleSessionToken(), {
      plan_id: planId,
      provider: 'manual',
    });
    expect(manual.status).toBe(201);
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await heading('Log in');
    await page.getByLabel('Username or e-mail').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('Accounts');

    await page.getByLabel('Username or e-mail').fill(USER.username);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: `Disable ${USER.username}` }).click();
    await page.getByText(`${USER.username} is now disabled`).waitFor();
    const row = page.getByRole('row', { name: new RegExp(USER.username) });
    await poll(() => row.getByRole('cell', { name: 'disabled', exact: true }).count()).toBe(1);
    await checkPage('admin-accounts');
    await page.getByRole('button', { name: `Reset second factor of ${USER.username}` }).click();
    await page.getByText(`Two-factor authentication of ${USER.username} reset`).waitFor();
    await poll(() =>
      page.getByRole('button', { name: `Reset second factor of ${USER.username}` }).count(),
    ).toBe(0);

    const login = await apiCall('POST', '/auth/login', undefined, {
      username: USER.username,
      password: USER.password,
    });
    expect(login.status).toBe(403);

    for (const [link, title, name] of [
      ['Plans', 'Plans', 'admin-plans'],
      ['Orders', 'Orders', 'admin-orders'],
      ['Payment settings', 'Payment settings', 'admin-payment'],
      ['Moderation', 'Files moderation', 'admin-files'],
    ] as const) {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: link, exact: true })
        .click();
      await heading(title);
      await checkPage(name);
      if (name === 'admin-orders') {
        // The buyer is named, and the write-off asks again before it is done.
        await page.getByRole('button', { name: `Write off order ${manual.data.id}` }).click();
        await page.getByText(`Mark order ${manual.data.id} of ${USER.username} paid: ¥9.90?`).waitFor();
        await page.getByRole('button', { name: `Mark paid order ${manual.data.id}` }).click();
        await page.getByText(`Order ${manual.data.id} of ${USER.username} written off as paid`).waitFor();
        const manualRows = page.getByRole('row').filter({ hasText: 'manual' });
        await poll(() => manualRows.filter({ hasText: 'paid' }).count()).toBe(1);
      }
    }
    expect(await page.getByRole('img', { name: 'cat.png' }).count()).toBe(1);
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
