// Moderation in the console, in a real Chromium against `npm start` (docs/MODERATION.md) holding every
// upload until reviewed (`moderation.hold_above` 0): the owner sees their held uploads in My files, badged
// and drawn through the content route while their links answer 451; the administrator approves them from
// the review queue; a visitor with no session reports one from the gallery's lightbox and the other from a
// share page's Report link; the administrator sees each report in the queue, approves the first (it leaves
// the queue and stays served) and takes the second down (its link then answers 404, its likeness is on the
// block list, and the audit log has all four reviews). The pages are screenshotted at both widths and checked
// with axe-core. Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import {
  type Browser,
  browserMissing,
  openBrowser,
  screenshots,
  seriousAccessibilityViolations,
} from '#test/support/browser.ts';
import { photoJpeg } from '#test/support/images.ts';
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

const MISSING = browserMissing('the moderation journey');
const USER = newAccount('uploader');

useConsoleService(MISSING, { MODERATION__HOLD_ABOVE: '0' });

interface Uploaded {
  id: string;
  url: string;
  original_name: string;
  moderation?: { state: string };
}

let userToken = '';
const uploaded: Record<'harbour' | 'meadow', Uploaded> = {} as never;

async function upload(name: string, bytes: Buffer): Promise<Uploaded> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/jpeg' }), name);
  form.append('permission', 'public');
  const answer = await apiCall('POST', '/api/v1/upload', userToken, form);
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data as Uploaded;
}

/** A visitor's browser of its own: no session, nothing shared with the administrator's page. */
async function asVisitor(work: (browser: Browser) => Promise<void>): Promise<void> {
  const visitor = await openBrowser();
  try {
    await work(visitor);
  } finally {
    await visitor.close();
  }
}

/** Fills in the report page the Report link opened, prefilled with `url`, and sends it. */
async function report(on: import('playwright-core').Page, url: string, reason: string, note: string) {
  await on.getByRole('heading', { level: 1, name: 'Report an image' }).waitFor();
  expect(await on.getByLabel('Link to the image or share').inputValue()).toBe(url);
  await on.getByLabel('Reason').selectOption({ label: reason });
  await on.getByLabel('Note (optional)').fill(note);
  await on.getByRole('button', { name: 'Send report' }).click();
  await on.getByRole('status').filter({ hasText: 'Thank you: the moderators will look at it.' }).waitFor();
}

const queueEntry = (name: string) =>
  page
    .getByRole('list', { name: 'Files to review' })
    .getByRole('listitem')
    .filter({ has: page.getByRole('heading', { level: 2, name }) });

async function openQueue(): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Review queue' }).click();
  await heading('Review queue');
}

describe('moderation in the console (npm start, Chromium)', () => {
  it('shows the owner their held uploads, badged and drawn through the content route, while their links answer 451', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    const login = await apiCall('POST', '/auth/login', undefined, USER);
    userToken = login.data.token;
    uploaded.harbour = await upload('harbour.jpg', await photoJpeg(640, 480, 1));
    uploaded.meadow = await upload('meadow.jpg', await photoJpeg(800, 600, 2));
    // The moderation worker classifies each upload from the table's stream: held, under this policy.
    await poll(async () => {
      const listed = await apiCall('GET', '/api/v1/files?limit=10', userToken);
      return (listed.data.items as Uploaded[]).map((file) => file.moderation?.state).sort();
    }).toEqual(['held', 'held']);
    expect((await fetch(uploaded.harbour.url)).status).toBe(451);

    await page.goto(`${service.url}/#/login`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    const grid = page.getByRole('list', { name: 'My files' });
    await poll(() => grid.getByText('Held for review').count()).toBe(2);
    const picture = grid.getByRole('img', { name: 'harbour.jpg' });
    await poll(() =>
      picture.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
    ).toBe(640);
    expect(await picture.getAttribute('src')).toMatch(/^blob:/);
    await grid.getByRole('button', { name: 'harbour.jpg', exact: true }).click();
    await page.getByRole('dialog').getByText('Held for review: its links answer 451').waitFor();
    await page.keyboard.press('Escape');
    await poll(() => page.getByRole('dialog').count()).toBe(0);
    await checkPage('held-files');
    await logOut();
  }, 120_000);

  it('lets the administrator approve held files from the review queue', async (context) => {
    if (MISSING) context.skip(MISSING);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await openQueue();
    for (const name of ['harbour.jpg', 'meadow.jpg']) {
      const entry = queueEntry(name);
      await entry.getByText('Held', { exact: true }).waitFor();
      await entry.getByText('No reports.').waitFor();
      await poll(() =>
        entry
          .getByRole('img', { name })
          .evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0);
    }
    await checkPage('admin-moderation-held');
    await queueEntry('harbour.jpg').getByRole('button', { name: 'Approve harbour.jpg' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved: harbour.jpg is published' }).waitFor();
    await queueEntry('meadow.jpg').getByRole('button', { name: 'Approve meadow.jpg' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved: meadow.jpg is published' }).waitFor();
    await page.getByText('Nothing waits for review.').waitFor();
    await poll(async () => (await fetch(uploaded.harbour.url)).status).toBe(200);
  }, 120_000);

  it('lets a visitor with no session report a public image from the gallery lightbox', async (context) => {
    if (MISSING) context.skip(MISSING);
    await asVisitor(async (visitor) => {
      const other = await visitor.context.newPage();
      other.setDefaultTimeout(60_000);
      await other.goto(`${service.url}/#/gallery`);
      await other
        .getByRole('list', { name: 'Public files' })
        .getByRole('button', { name: 'harbour.jpg', exact: true })
        .click();
      await other.getByRole('dialog').getByRole('link', { name: 'Report harbour.jpg' }).click();
      await other.getByRole('heading', { level: 1, name: 'Report an image' }).waitFor();
      expect(await seriousAccessibilityViolations(other), 'axe on the report page').toEqual([]);
      await screenshots(other, 'report');
      await report(other, uploaded.harbour.url, 'Spam or scam', 'Posted all over a forum');
    });
  }, 120_000);

  it('shows the report in the review queue; Approve takes the file out of it and keeps it served', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.reload();
    await heading('Review queue');
    const entry = queueEntry('harbour.jpg');
    await entry.getByText('Spam or scam: “Posted all over a forum”', { exact: false }).waitFor();
    await entry.getByText('1 report:').waitFor();
    await entry.getByRole('link', { name: (await apiCall('GET', '/auth/me', userToken)).data.id }).waitFor();
    expect(await queueEntry('meadow.jpg').count()).toBe(0);
    await checkPage('admin-moderation');

    await entry.getByRole('button', { name: 'Approve harbour.jpg' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved: harbour.jpg is published' }).waitFor();
    await page.getByText('Nothing waits for review.').waitFor();
    const queue = await apiCall('GET', '/api/v1/admin/moderation', await adminToken());
    expect(queue.status, JSON.stringify(queue)).toBe(200);
    expect(queue.data.items).toEqual([]);
    expect((await fetch(uploaded.harbour.url)).status).toBe(200);
  }, 120_000);

  it("takes down a file reported from a share page's Report link: its link is gone and its likeness listed", async (context) => {
    if (MISSING) context.skip(MISSING);
    const share = await apiCall('POST', '/api/v1/shares', userToken, { file_id: uploaded.meadow.id });
    expect(share.status, JSON.stringify(share)).toBe(201);
    await asVisitor(async (visitor) => {
      const other = await visitor.context.newPage();
      other.setDefaultTimeout(60_000);
      await other.goto(share.data.url);
      await other.getByRole('link', { name: 'Report meadow.jpg' }).click();
      const imageLink = decodeURIComponent(new URL(other.url()).hash.split('url=')[1] ?? '');
      expect(imageLink).toMatch(new RegExp(`^${share.data.url}/i/[A-Za-z0-9_-]{64}$`));
      await report(other, imageLink, 'Copyright infringement', 'My photograph, used without leave');
    });

    await page.reload();
    await heading('Review queue');
    const entry = queueEntry('meadow.jpg');
    await entry.getByText('Copyright infringement', { exact: false }).waitFor();
    await entry.getByRole('button', { name: 'Take down meadow.jpg' }).click();
    await entry.getByText('Take down meadow.jpg for good?').waitFor();
    await entry.getByRole('button', { name: 'Yes, take it down' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Taken down: meadow.jpg; its likeness is now refused at upload' })
      .waitFor();
    await page.getByText('Nothing waits for review.').waitFor();
    await poll(async () => (await fetch(uploaded.meadow.url)).status).toBeOneOf([404, 451]);
    const admin = await adminToken();
    expect((await apiCall('GET', '/api/v1/admin/moderation', admin)).data.items).toEqual([]);

    // Its likeness is on the block list, and both reviews are in the audit log.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Block list' }).click();
    await heading('Block list');
    await page.getByRole('cell', { name: uploaded.meadow.id }).waitFor();
    await checkPage('admin-blocklist');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
    await heading('Audit log');
    await page.getByRole('cell', { name: 'moderation.take_down', exact: true }).waitFor();
    await poll(() => page.getByRole('cell', { name: 'moderation.approve', exact: true }).count()).toBe(3);
    await checkPage('admin-audit');
  }, 120_000);

  itRanWithoutPolicyViolations(MISSING);
});
