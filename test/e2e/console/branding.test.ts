// The operator's branding in a real Chromium against `npm start` (docs/DEPLOYMENT.md "Branding"): an
// administrator sets the site's name, logo and accent colour on the console's Site page and then sees them
// on the console (header, tab title, colour, footer, terms), on a share page, in a mail in the local inbox
// and in a downloaded ShareX configuration; and no console page answers a 404 for its icon. Skips itself,
// saying why, when Chromium is absent.
import { readFileSync } from 'node:fs';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  heading,
  inbox,
  itRanWithoutPolicyViolations,
  logIn,
  newAccount,
  page,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the console branding journey');
const RUN = Date.now().toString(36);
const SITE = `Pixel Harbour ${RUN}`;
const ACCENT = '#aa3300';
const VISITOR = newAccount('visitor');
/** Every response the page received with a 404, by URL. */
const notFound: string[] = [];
let logoPath = '';

/** The page's `--accent`, as its style sheets and the site set it. */
const accentOf = () =>
  page.evaluate(() => {
    const window = globalThis as unknown as {
      getComputedStyle(element: unknown): { getPropertyValue(name: string): string };
      document: { documentElement: unknown };
    };
    return window.getComputedStyle(window.document.documentElement).getPropertyValue('--accent').trim();
  });
/** An image's width as loaded: 0 when it was not. */
const loadedWidth = (image: Locator) =>
  image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);

async function uploadAs(token: string, name: string, colour: [number, number, number]) {
  const form = new FormData();
  form.append('file', new Blob([makePng(64, 32, colour)], { type: 'image/png' }), name);
  const answer = await apiCall('POST', '/api/v1/upload', token, form);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data as { id: string; url: string };
}

useConsoleService(MISSING);

describe('the site branding journey (npm start, Chromium)', () => {
  it('lets an administrator set the name, logo and accent colour on the Site page, shown at once', async (context) => {
    if (MISSING) context.skip(MISSING);
    page.on('response', (response) => {
      if (response.status() === 404) notFound.push(response.url());
    });
    // The logo: an image the administrator uploaded to this site, named by its path here.
    logoPath = new URL((await uploadAs(await adminToken(), 'logo.png', [170, 51, 0])).url).pathname;

    await page.goto(`${service.url}/`);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Site', exact: true })
      .click();
    await heading('Site');
    await page.getByLabel('Site name').fill(SITE);
    await page.getByLabel('Logo URL').fill(logoPath);
    await page.getByLabel('Accent colour').fill('red');
    await page.getByRole('button', { name: 'Save' }).click();
    // A bad colour is named on its field; nothing is saved.
    await page.getByText('must be a colour as #rrggbb').waitFor();
    expect((await apiCall('GET', '/api/v1/site')).data.name).not.toBe(SITE);

    await page.getByLabel('Accent colour').fill(ACCENT);
    await page
      .getByLabel('Footer (HTML)')
      .fill(
        '<p>Run by the harbour crew <img src=x onerror="alert(1)"><a href="https://example.com/">About</a></p>',
      );
    await page.getByLabel('Terms of service').fill('Be kind.\n\nNo spam.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved: the site shows the new branding.').waitFor();

    const brand = page.locator('header.top .brand');
    await expect.poll(() => brand.textContent()).toBe(SITE);
    expect(await brand.locator('img').getAttribute('src')).toBe(logoPath);
    await expect.poll(() => loadedWidth(brand.locator('img'))).toBe(64);
    expect(await page.title()).toBe(`Site · ${SITE}`);
    expect(await accentOf()).toBe(ACCENT);
    // The footer as stored: its text and link, nothing that runs.
    const footer = page.locator('footer.site-footer');
    await footer.getByText('Run by the harbour crew').waitFor();
    expect(await footer.locator('img, [onerror]').count()).toBe(0);
    await checkPage('admin-site');

    await footer.getByRole('link', { name: 'Terms of service' }).click();
    await heading('Terms of service');
    await page.getByText('No spam.').waitFor();
  }, 180_000);

  it('names the ShareX configuration a new token downloads after the site', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens' }).click();
    await heading('API tokens');
    await page.getByLabel('Token name').fill('ShareX desktop');
    await page.getByRole('button', { name: 'Create token' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /^download .*\.sxcu$/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`Pixel_Harbour_${RUN}.sxcu`);
    const sxcu = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    expect(sxcu).toMatchObject({ Name: SITE, RequestURL: `${service.url}/api/v1/upload` });
  }, 120_000);

  it('signs the mail a visitor gets and brands the share page the visitor opens', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(VISITOR);
    const mail = (await inbox().mails()).findLast((sent) => sent.to === VISITOR.email);
    expect(mail?.text).toContain(`— ${SITE}`);
    expect(mail?.html).toContain(`<p>— ${SITE}</p>`);

    const login = await apiCall('POST', '/auth/login', undefined, {
      username: VISITOR.username,
      password: VISITOR.password,
    });
    const file = await uploadAs(login.data.token, 'harbour-dawn.png', [20, 160, 60]);
    const share = await apiCall('POST', '/api/v1/shares', login.data.token, { file_id: file.id });
    await page.goto(share.data.url);
    expect(await page.title()).toBe(`harbour-dawn.png · ${SITE}`);
    const header = page.locator('header.site');
    expect((await header.textContent())?.trim()).toBe(SITE);
    await expect.poll(() => loadedWidth(header.locator('img'))).toBe(64);
    expect(await accentOf()).toBe(ACCENT);
    expect(await page.locator('meta[property="og:site_name"]').getAttribute('content')).toBe(SITE);
  }, 120_000);

  it('answers no console page with a 404, its icon included', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/gallery`);
    await heading('Gallery');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).toBe('/console/favicon.svg');
    const served = await page.request.get(`${service.url}${icon}`);
    expect(served.status()).toBe(200);
    expect(served.headers()['content-type']).toBe('image/svg+xml');
    expect(notFound).toEqual([]);
  }, 60_000);
});

itRanWithoutPolicyViolations(MISSING);
