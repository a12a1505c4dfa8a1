// The console against a lockout (docs/ACCOUNTS.md "Device tokens", "Password reset by code or link"), in a
// real Chromium against `npm start` (through harness.ts): it keeps the device token its login answered,
// past logout, and sends it with the next login, so a stranger keeping the account's guard closed does not
// keep its owner out; and a forgotten password is reset from the login page by the mailed code, or by the
// link's page, which asks only for the new password; the reset signs the browser in with a new token. Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  apiCall,
  checkPage,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  mailedCode,
  newAccount,
  page,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console lockout journeys');
const USER = newAccount('owner', 'owner password 1');
const NEW_PASSWORD = 'owner password 2';

useConsoleService(MISSING);

async function lockAccount(): Promise<void> {
  for (let n = 0; n < 10; n++) {
    await apiCall('POST', '/auth/login', undefined, { username: USER.username, password: `guess ${n}` });
  }
  const locked = await apiCall('POST', '/auth/login', undefined, { username: USER.username, password: 'x' });
  expect(locked.status).toBe(429);
}

const storedDevices = () =>
  page.evaluate(() =>
    (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(
      'console.devices',
    ),
  );

describe('the console against a lockout (npm start, Chromium)', () => {
  it('keeps its device token past logout, so it logs in while strangers hold the account locked', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/#/login`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    expect(await storedDevices()).toContain(USER.username);
    await logOut();

    await lockAccount();
    await logIn(USER.email.toUpperCase(), USER.password);
    await heading('My files');
    await logOut();

    // Without the token (another browser), the account's guard holds the login.
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { removeItem(key: string): void } }).localStorage.removeItem(
        'console.devices',
      ),
    );
    await logIn(USER.username, USER.password);
    await page
      .getByRole('alert')
      .getByText(/Too many failed logins/)
      .waitFor();
  }, 180_000);

  it('resets a forgotten password from the login page with the mailed code', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await heading('Reset your password');
    await checkPage('reset');
    await page.getByLabel('E-mail', { exact: true }).fill(USER.email);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText(`If ${USER.email} belongs to an account`).waitFor();
    await page.getByLabel('E-mail code').fill(await mailedCode(USER.email));
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    // The reset signs this browser in and keeps the new device token it answered.
    await heading('My files');
    expect(await storedDevices()).toContain(USER.username);
    await logOut();
    // A stranger closes the guard again (the reset cleared it): this browser still logs in.
    await lockAccount();
    await logIn(USER.username, NEW_PASSWORD);
    await heading('My files');
    await logOut();
  }, 180_000);

  it("opens a mailed link's page with only the new password, and says when the link is no longer good", async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/reset?token=${'A'.repeat(43)}`);
    await heading('Reset your password');
    expect(await page.getByLabel('E-mail', { exact: true }).count()).toBe(0);
    await checkPage('reset-link');
    await page.getByLabel('New password').fill('a third password');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('alert').getByText('email or code is invalid or expired').waitFor();
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
