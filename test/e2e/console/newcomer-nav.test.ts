// The rough edges a newcomer's run found in the console (issue 40, findings 8 to 10), each driven in a real
// Chromium against `npm start` (through harness.ts): a phone's header is one row with a Menu button; the
// accounts' search sits right above the table; an administrator's login asks no door that answers 401; a
// presigned upload logs no console error; an SVG is refused in words that name it; the gallery's empty
// state says what to do; ShareX's deletion URL deletes that file after one confirmation. Skips itself,
// saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng, pngChunk } from '#test/support/images.ts';
import {
  ADMIN,
  apiCall,
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

const MISSING = browserMissing('the web console newcomer journey');
const USER = newAccount('newcomer');

useConsoleService(MISSING);

/** Every answer of 400 or more the page received, and every error the browser's console logged. */
const failed: string[] = [];
const consoleErrors: string[] = [];

/** A PNG over the direct upload limit (a padding text chunk), so the console must presign it. */
function largePng(bytes: number): Buffer {
  const small = makePng(40, 30, [30, 90, 160]);
  const padding = pngChunk(
    'tEXt',
    Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.alloc(bytes, 0x61)]),
  );
  return Buffer.concat([small.subarray(0, -12), padding, small.subarray(-12)]);
}

describe("web console, a newcomer's rough edges (npm start, Chromium)", () => {
  it('gives the empty gallery a next step, logged out and in', async (context) => {
    if (MISSING) context.skip(MISSING);
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${service.url}/#/gallery`);
    await heading('Public gallery');
    await page.getByText('Nothing public yet.').waitFor();
    await page.locator('.empty-state').getByRole('link', { name: 'register' }).click();
    await heading('Register');
  }, 180_000);

  it('logs an administrator in at their door alone, the choice remembered: no 401 on the way', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/login`);
    await heading('Log in');
    failed.length = 0;
    await page.getByLabel('Administrator account').check();
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    expect(failed).toEqual([]);

    // The search is right above the table; the password some actions need is below it, by them.
    const search = await page.getByRole('form', { name: 'Search accounts' }).boundingBox();
    const table = await page.getByRole('table').boundingBox();
    const password = await page.getByLabel(/^Your password \(to disable an administrator/).boundingBox();
    expect(table!.y).toBeGreaterThan(search!.y + search!.height - 1);
    expect(password!.y).toBeGreaterThan(table!.y + table!.height - 1);

    await logOut();
    await expect(page.getByLabel('Administrator account').isChecked()).resolves.toBe(true);
  }, 180_000);

  it('folds the links of a phone-wide header behind a Menu button that opens, navigates and closes', async (context) => {
    if (MISSING) context.skip(MISSING);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const header = page.getByRole('banner');
      // One row: the 13 links of an administrator once took four rows (216 px of 844).
      expect((await header.boundingBox())!.height).toBeLessThan(64);
      const menu = page.getByRole('button', { name: 'Menu' });
      const bans = page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Bans', exact: true });
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await bans.isVisible()).toBe(false);

      // By keyboard: Enter opens it, Escape closes it and leaves the focus on the button.
      await menu.focus();
      await page.keyboard.press('Enter');
      await poll(() => menu.getAttribute('aria-expanded')).toBe('true');
      await bans.waitFor({ state: 'visible' });
      await page.keyboard.press('Escape');
      await poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      expect(await menu.evaluate((button) => button === button.ownerDocument.activeElement)).toBe(true);

      // A link followed closes it.
      await menu.click();
      await bans.click();
      await heading('Bans');
      await poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      expect((await header.boundingBox())!.height).toBeLessThan(64);
      await menu.click();
      await page.getByRole('button', { name: 'Log out', exact: true }).click();
      await heading('Log in');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  }, 180_000);

  it('uploads presigned with no console error, and refuses an SVG saying why', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.getByLabel('Administrator account').uncheck();
    await logIn(USER.username, USER.password);
    await heading('My files');
    consoleErrors.length = 0;
    const picker = page.locator('#file-picker');
    await picker.setInputFiles({
      name: 'large.png',
      mimeType: 'image/png',
      buffer: largePng(4.5 * 1024 * 1024),
    });
    const grid = page.getByRole('list', { name: 'My files' });
    await grid.getByRole('button', { name: 'large.png', exact: true }).waitFor();
    expect(consoleErrors).toEqual([]);

    await picker.setInputFiles({
      name: 'logo.svg',
      mimeType: 'image/svg+xml',
      buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    });
    await page
      .getByRole('list', { name: 'Uploads' })
      .getByText(/SVG can carry scripts that would run on this site \(a stored-XSS risk\)/)
      .waitFor();
  }, 180_000);

  it('points the logged-in empty gallery to My files', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/gallery`);
    await page.getByText('Nothing public yet.').waitFor();
    await page.locator('.empty-state').getByRole('link', { name: 'My files' }).click();
    await heading('My files');
  }, 180_000);

  it("opens ShareX's deletion URL on a page that deletes that file after one confirmation", async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens' }).click();
    await heading('API tokens');
    await page.getByLabel('Token name').fill('sharex');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('Token', { exact: true }).inputValue();
    const href = (await page.getByRole('link', { name: /^download .*\.sxcu$/ }).getAttribute('href'))!;
    const sxcu = JSON.parse(decodeURIComponent(href.slice(href.indexOf(',') + 1))) as { DeletionURL: string };
    expect(sxcu.DeletionURL).toBe(`${service.url}/#/files/{json:data.id}/delete`);

    // ShareX uploads with the token, then opens the URL with the answer's id in the signed-in browser.
    const form = new FormData();
    form.append('file', new Blob([makePng(32, 24, [220, 40, 90])], { type: 'image/png' }), 'shot.png');
    const uploaded = await fetch(`${service.url}/api/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    const { data } = (await uploaded.json()) as { data: { id: string } };
    await page.goto(sxcu.DeletionURL.replace('{json:data.id}', data.id));
    await heading('Delete a file');
    await page.getByRole('img', { name: 'shot.png' }).waitFor();
    await page.getByRole('button', { name: 'Delete shot.png' }).click();
    await page.getByText('Deleted: shot.png').waitFor();
    expect((await apiCall('GET', `/api/v1/files/${data.id}`, token)).status).toBe(404);
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
