// Passkeys in the console (docs/DESIGN.md 18), in a real Chromium against `npm start` (through harness.ts),
// with the browser's own WebAuthn answered by Chromium's virtual authenticator (DevTools protocol, WebAuthn
// domain): a passkey added on the security page signs in at the users' door, and an administrator's at the
// administrators' door. Skips itself, saying why, when Chromium is absent.
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  ADMIN,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  logIn,
  logOut,
  newAccount,
  page,
  policyViolations,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console passkey journeys');
const USER = newAccount('pk', 'passkey owner 1');

useConsoleService(MISSING);

/** A platform authenticator inside Chromium that holds discoverable credentials and verifies its user. */
async function virtualAuthenticator(): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
}

/** Adds a passkey on the security page, as a person would. */
async function addPasskey(name: string, password: string): Promise<void> {
  await page.getByRole('link', { name: 'Security' }).click();
  await heading('Security');
  const form = page.getByRole('form', { name: 'Add a passkey' });
  await form.getByLabel('Passkey name').fill(name);
  await form.getByLabel('Current password').fill(password);
  await form.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByText(`Passkey "${name}" added.`).waitFor();
  await page
    .getByRole('list', { name: 'Your passkeys' })
    .getByRole('button', { name: `Remove passkey ${name}` })
    .waitFor();
}

describe('passkeys in the console (npm start, Chromium virtual authenticator)', () => {
  it("adds a passkey on the security page, signs in with it at the users' door and answers the TOTP step with it", async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/#/login`);
    await virtualAuthenticator();
    await logIn(USER.username, USER.password);
    await heading('My files');

    await addPasskey('Laptop', USER.password);
    await checkPage('security-passkeys');
    await logOut();

    // No name typed: the browser offers the passkey it holds for this site.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await heading('My files');

    // With TOTP on, the password's challenge is answered by the passkey instead of a code.
    const token = await consoleSessionToken();
    const setup = await apiCall('POST', '/auth/totp/setup', token, { password: USER.password });
    const code = await generate({ secret: setup.data.secret, epoch: Math.floor(Date.now() / 1000) });
    expect((await apiCall('POST', '/auth/totp/enable', token, { code })).status).toBe(200);
    await logOut();
    await logIn(USER.username, USER.password);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await heading('My files');
    await logOut();
  }, 180_000);

  it("signs an administrator in with a passkey at the administrators' door, unasked, and removes one", async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/login`);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await addPasskey('Admin key', ADMIN.password);
    await logOut();

    // A browser that never saw the account (nothing kept): the users' door refuses the administrator's
    // passkey, and the form signs in at the administrators' door, the Administrator account box unticked.
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { removeItem(key: string): void } }).localStorage.removeItem(
        'console.devices',
      ),
    );
    expect(await page.getByLabel('Administrator account').isChecked()).toBe(false);
    await page.getByLabel('Username or e-mail').fill(ADMIN.username);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await heading('Accounts');
    await logOut();
    // Once seen, the account's own door at once (one ceremony).
    await page.getByLabel('Username or e-mail').fill(ADMIN.username);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await heading('Accounts');
    await logOut();

    // The user removes the passkey on the security page, with the password (the passkey answers the TOTP
    // step of this login once more).
    await logIn(USER.username, USER.password);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await heading('My files');
    await page.getByRole('link', { name: 'Security' }).click();
    await heading('Security');
    await page.getByRole('button', { name: 'Remove passkey Laptop' }).click();
    const removal = page.getByRole('form', { name: 'Remove the passkey Laptop' });
    await removal.getByLabel('Current password').fill(USER.password);
    await removal.getByRole('button', { name: 'Remove passkey Laptop' }).click();
    await page.getByText('Passkey "Laptop" removed.').waitFor();
    const left = await apiCall('GET', '/auth/passkeys', await consoleSessionToken());
    expect(left.data).toEqual([]);
    expect(policyViolations).toEqual([]);
  }, 180_000);
});
