// Albums and share links in the console, in a real Chromium against `npm start` (docs/DESIGN.md 16): make an
// album, rename it, upload into it, share it with a password and a view limit, open the share in a second
// browser (its page, without script, at 1280 and 360 px), run it out of views, and revoke it. Every page is
// screenshotted at both widths and checked with axe-core. Shares harness.ts with the other journeys; skips
// itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import {
  type Browser,
  browserMissing,
  horizontalOverflow,
  openBrowser,
  screenshots,
  seriousAccessibilityViolations,
} from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  logIn,
  newAccount,
  page,
  policyViolations,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the albums and share links journey');
const USER = newAccount('sharer');
const SHARE_PASSWORD = 'share-e2e-pass';

useConsoleService(MISSING);

let sharePath = '';

describe('albums and share links in the console (npm start, Chromium)', () => {
  it('makes an album, renames it and uploads into it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/#/login`);
    await logIn(USER.username, USER.password);
    await heading('My files');

    await page.getByRole('link', { name: 'Albums', exact: true }).click();
    await heading('Albums');
    await page.getByLabel('Album name').fill('Holiday');
    await page.getByLabel('Description (optional)').fill('Two weeks by the sea');
    await page.getByRole('button', { name: 'Create album' }).click();
    await heading('Album Holiday');

    await page.getByLabel('New name').fill('Seaside');
    await page.getByRole('button', { name: 'Rename' }).click();
    await heading('Album Seaside');

    await page.locator('#file-picker').setInputFiles({
      name: 'beach.png',
      mimeType: 'image/png',
      buffer: makePng(64, 40, [30, 140, 220]),
    });
    const grid = page.getByRole('list', { name: 'Files of album Seaside' });
    // The file's lightbox names its album.
    await grid.getByRole('button', { name: 'beach.png', exact: true }).click();
    expect(await page.getByRole('dialog').getByLabel('Album').inputValue()).toMatch(/^[0-9a-f-]{36}$/);
    await page.keyboard.press('Escape');
    await poll(() => page.getByRole('dialog').count()).toBe(0);
    const token = await consoleSessionToken();
    const albums = await apiCall('GET', '/api/v1/albums', token);
    expect(albums.data.items).toMatchObject([{ name: 'Seaside', file_count: 1 }]);
    await checkPage('album');

    // The albums list, holding it.
    await page.getByRole('link', { name: 'Albums', exact: true }).click();
    await heading('Albums');
    await page.getByRole('link', { name: 'Seaside', exact: true }).waitFor();
    await checkPage('albums');
    await page.getByRole('link', { name: 'Seaside', exact: true }).click();
    await heading('Album Seaside');
  }, 180_000);

  it('moves a file out of the album and back from its lightbox', async (context) => {
    if (MISSING) context.skip(MISSING);
    const grid = page.getByRole('list', { name: 'Files of album Seaside' });
    await grid.getByRole('button', { name: 'beach.png', exact: true }).click();
    await page.getByRole('dialog').getByLabel('Album').selectOption({ label: 'No album' });
    // Out of the album, the file leaves its grid, and its lightbox closes.
    await page.getByText('No files in this album yet.').waitFor();
    await poll(() => page.getByRole('dialog').count()).toBe(0);

    await page.getByRole('link', { name: 'My files' }).click();
    await heading('My files');
    await page
      .getByRole('list', { name: 'My files' })
      .getByRole('button', { name: 'beach.png', exact: true })
      .click();
    const lightbox = page.getByRole('dialog');
    await lightbox.getByLabel('Album').selectOption({ label: 'Seaside' });
    await lightbox.getByRole('status').filter({ hasText: 'Moved to Seaside' }).waitFor();
    await lightbox.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('link', { name: 'Albums', exact: true }).click();
    await page.getByRole('link', { name: 'Seaside' }).click();
    await heading('Album Seaside');
    await page
      .getByRole('list', { name: 'Files of album Seaside' })
      .getByRole('button', { name: 'beach.png', exact: true })
      .waitFor();
  }, 120_000);

  it('shares the album with a password and a view limit of 2, and copies the link', async (context) => {
    if (MISSING) context.skip(MISSING);
    const form = page.getByRole('region', { name: 'Share this album' });
    await form.getByLabel('Password (optional)').fill(SHARE_PASSWORD);
    await form.getByLabel('View limit (optional)').fill('2');
    await form.getByRole('button', { name: 'Create share link' }).click();
    const link = form.getByLabel('Share link');
    await poll(() => link.inputValue()).toMatch(/\/s\/[A-Za-z0-9_-]{32}$/);
    sharePath = new URL(await link.inputValue()).pathname;
    await form.getByRole('button', { name: 'Copy link' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Link copied|Select the link/ })
      .waitFor();
    await checkPage('album-shared');
  }, 60_000);

  it('opens the share in a second browser: the password form, then the album, until the views run out', async (context) => {
    if (MISSING) context.skip(MISSING);
    let visitor: Browser | undefined;
    try {
      visitor = await openBrowser();
      const other = await visitor.context.newPage();
      other.setDefaultTimeout(60_000);
      const scripts: string[] = [];
      other.on('request', (request) => {
        if (request.resourceType() === 'script') scripts.push(request.url());
      });

      const form = await other.goto(`${service.url}${sharePath}`);
      expect(form?.status()).toBe(401);
      await other.getByRole('heading', { level: 1, name: 'Password required' }).waitFor();
      expect(await seriousAccessibilityViolations(other), 'axe on the password form').toEqual([]);
      await screenshots(other, 'share-password');

      await other.getByLabel('Password').fill(SHARE_PASSWORD);
      await other.getByRole('button', { name: 'Open' }).click();
      await other.getByRole('heading', { level: 1, name: 'Seaside' }).waitFor();
      const image = other.getByRole('img', { name: 'beach.png' });
      await poll(() =>
        image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
      ).toBe(64);
      await other.getByText('Views: 1 of 2').waitFor();
      await screenshots(other, 'share-page');
      await other.setViewportSize({ width: 360, height: 740 });
      expect(await horizontalOverflow(other), 'the share page scrolls sideways at 360 px').toEqual([]);
      await other.setViewportSize({ width: 1280, height: 800 });
      expect(await seriousAccessibilityViolations(other), 'axe on the share page').toEqual([]);

      // The second view is the last one.
      await other.goto(`${service.url}${sharePath}`);
      await other.getByLabel('Password').fill(SHARE_PASSWORD);
      await other.getByRole('button', { name: 'Open' }).click();
      await other.getByText('Views: 2 of 2').waitFor();
      // Out of views: the page says so at once, asking for no password.
      const ended = await other.goto(`${service.url}${sharePath}`);
      expect(ended?.status()).toBe(410);
      await other.getByRole('heading', { level: 1, name: 'No longer available' }).waitFor();
      expect(scripts).toEqual([]);
    } finally {
      await visitor?.close();
    }
  }, 120_000);

  it('shows the link with its views on the share links page, and revokes it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('link', { name: 'Share links' }).click();
    await heading('Share links');
    const row = page.locator('tr', { has: page.getByRole('link', { name: new RegExp(`${sharePath}$`) }) });
    await row.getByRole('cell', { name: '2 of 2', exact: true }).waitFor();
    await row.getByRole('cell', { name: 'Album Seaside', exact: true }).waitFor();
    await checkPage('shares');

    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('status').filter({ hasText: 'Share link revoked' }).waitFor();
    await page.getByText('No share links.').waitFor();
    const opened = await apiCall('POST', `/api/v1${sharePath.replace('/s/', '/shares/')}/open`, undefined, {
      password: SHARE_PASSWORD,
    });
    expect(opened.status).toBe(410);
  }, 60_000);

  it('shares one file from its lightbox', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('link', { name: 'My files' }).click();
    await heading('My files');
    await page
      .getByRole('list', { name: 'My files' })
      .getByRole('button', { name: 'beach.png', exact: true })
      .click();
    const card = page.getByRole('dialog');
    await card.getByText('Share…').click();
    const form = card.getByRole('region', { name: 'Share beach.png' });
    await form.getByRole('button', { name: 'Create share link' }).click();
    const link = form.getByLabel('Share link');
    await poll(() => link.inputValue()).toMatch(/\/s\/[A-Za-z0-9_-]{32}$/);
    const opened = await apiCall('POST', `/api/v1/shares/${(await link.inputValue()).split('/s/')[1]}/open`);
    expect(opened.status).toBe(200);
    expect(opened.data.album).toBeNull();
    await checkPage('file-share');
    await page.keyboard.press('Escape');
    expect(policyViolations).toEqual([]);
  }, 60_000);
});
