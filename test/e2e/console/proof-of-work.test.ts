// Proof of work in a real Chromium against `npm start` with `auth.challenge.required` on (a small
// max_number): the API refuses a code send without a solution, the console registers a new account and
// sends a report with ALTCHA's widget solving each challenge, and the share page's password form solves its
// own (its script from this origin), all under the pages' Content-Security-Policies (docs/ACCOUNTS.md
// "Proof of work").
// Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import { makePng } from '#test/support/images.ts';
import {
  apiCall,
  consoleSessionToken,
  heading,
  itRanWithoutPolicyViolations,
  mailedCode,
  newAccount,
  page,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the proof-of-work journey');
const USER = newAccount('solver');
let fileUrl = '';

useConsoleService(MISSING, { AUTH__CHALLENGE__REQUIRED: 'true', AUTH__CHALLENGE__MAX_NUMBER: '5000' });

describe('proof of work (npm start, Chromium)', () => {
  it('refuses a registration code without a solved challenge, naming altcha', async (context) => {
    if (MISSING) context.skip(MISSING);
    const refused = await apiCall('POST', '/auth/register/code', undefined, { email: USER.email });
    expect(refused.status).toBe(400);
    expect(refused.message).toMatch(/^altcha: /);
  });

  it('registers in the console, the widget solving each challenge', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/register`);
    await heading('Register');
    await page.locator('altcha-widget').waitFor();
    await page.getByLabel('E-mail', { exact: true }).fill(USER.email);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText(`A code was sent to ${USER.email}`).waitFor();
    await page.getByLabel('E-mail code').fill(await mailedCode(USER.email));
    await page.getByLabel('Username').fill(USER.username);
    await page.getByLabel('Password', { exact: true }).fill(USER.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('My files');
    expect(await page.getByText(USER.username, { exact: true }).count()).toBeGreaterThan(0);
  }, 180_000);

  it("opens a password share on its page, the form's widget solving the challenge", async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.locator('#file-picker').setInputFiles({
      name: 'locked.png',
      mimeType: 'image/png',
      buffer: makePng(40, 30, [20, 140, 90]),
    });
    await page
      .getByRole('list', { name: 'My files' })
      .getByRole('button', { name: 'locked.png', exact: true })
      .waitFor();
    const token = await consoleSessionToken();
    const files = await apiCall('GET', '/api/v1/files', token);
    const fileId = files.data.items[0].id as string;
    fileUrl = files.data.items[0].url as string;
    const shared = await apiCall('POST', '/api/v1/shares', token, {
      file_id: fileId,
      password: 'share-pass-1',
    });
    expect(shared.status).toBe(201);
    await page.goto(shared.data.url);
    await heading('Password required');
    await page.getByLabel('Password').fill('share-pass-1');
    await page.getByRole('button', { name: 'Open' }).click();
    await heading('locked.png');
    await page.getByRole('img', { name: 'locked.png' }).waitFor();
  }, 180_000);

  it('sends a report from the console, the widget solving its challenge', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/report?url=${encodeURIComponent(fileUrl)}`);
    await heading('Report an image');
    await page.getByLabel('Reason').selectOption('spam');
    await page.getByRole('button', { name: 'Send report' }).click();
    await page.getByText('Thank you: the moderators will look at it.').waitFor();
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
