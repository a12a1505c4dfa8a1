// What a newcomer's first run of the console found (issue 40), in a real Chromium against `npm start`: the
// console opened at http://127.0.0.1:PORT (the address npm start listens on) shows its thumbnails with no
// Content-Security-Policy violation, and a picture that cannot load says so instead of a broken image; the
// share links table names what each link shares, with the expiry as a date, and a share of one photo shows
// it large (not a 210-px card) with its expiry readable. Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { photoJpeg } from '#test/support/images.ts';
import {
  apiCall,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing("the newcomer's console journey");
const USER = newAccount('newcomer');
const PHOTO = 'harbour.jpg';

useConsoleService(MISSING);

/** npm start's address as its banner names it, on the loopback address instead of `localhost`. */
const loopback = () => service.url.replace('//localhost:', '//127.0.0.1:');

const naturalWidth = (name: string) =>
  page
    .getByRole('img', { name, exact: true })
    .first()
    .evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth);

describe("a newcomer's console at 127.0.0.1 (npm start, Chromium)", () => {
  let token = '';
  let fileId = '';

  it('shows the thumbnails of My files when opened at 127.0.0.1, and says so when a picture cannot load', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    token = (await apiCall('POST', '/auth/login', undefined, USER)).data.token;
    const form = new FormData();
    form.append('file', new Blob([await photoJpeg(1600, 1200, 7)], { type: 'image/jpeg' }), PHOTO);
    const uploaded = await apiCall('POST', '/api/v1/upload', token, form);
    expect(uploaded.status, JSON.stringify(uploaded)).toBe(200);
    fileId = uploaded.data.id;

    await page.goto(`${loopback()}/`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    await poll(() => naturalWidth(PHOTO)).toBeGreaterThan(0);
    // Its links are on the address the console was opened at, which its policy allows.
    const thumbnail = await page.getByRole('img', { name: PHOTO, exact: true }).first().getAttribute('src');
    expect(new URL(thumbnail!).origin).toBe(loopback());

    // A thumbnail that does not load is a tile saying so and naming where it was asked for.
    await page.route('**/i/**', (route) => route.abort());
    await page.reload();
    await page.getByRole('img', { name: `${PHOTO}: not loaded` }).waitFor();
    await page
      .getByText(`Image did not load from ${new URL(loopback()).host}`)
      .first()
      .waitFor();
    await page.unroute('**/i/**');
  }, 180_000);

  it('names the shared file and its expiry on the share links page, and shows a single photo large', async (context) => {
    if (MISSING) context.skip(MISSING);
    const expires = new Date(Date.UTC(2030, 5, 15, 9, 30)).toISOString();
    const share = await apiCall('POST', '/api/v1/shares', token, { file_id: fileId, expires_at: expires });
    expect(share.status, JSON.stringify(share)).toBe(201);

    await page.goto(`${loopback()}/#/shares`);
    await heading('Share links');
    const row = page.getByRole('row').filter({ hasText: share.data.id });
    await row.getByRole('cell', { name: `File ${PHOTO}`, exact: true }).waitFor();
    expect(await row.textContent()).not.toContain('2030-06-15T');

    await page.goto(share.data.url.replace('//localhost:', '//127.0.0.1:'));
    await page.getByRole('heading', { level: 1 }).waitFor();
    await poll(() => naturalWidth(PHOTO)).toBeGreaterThan(0);
    // At 1280 x 800 one photo fills the page's width or height, far past a grid card's 210 px.
    const box = (await page.getByRole('img', { name: PHOTO, exact: true }).boundingBox())!;
    expect(Math.max(box.width, box.height)).toBeGreaterThan(500);
    await page.getByText('available until 15 June 2030 at 09:30 UTC').waitFor();
    expect(await page.locator('main').textContent()).not.toContain('2030-06-15T');
  }, 120_000);

  itRanWithoutPolicyViolations(MISSING);
});
