// The reset-by-link flow end to end from outside, in a real Chromium against `npm start`: an account
// registered with the code from npm start's SES stand-in, a reset asked for over HTTP, the mail read from
// the stand-in's HTTP API, its link opened in the console, a new password set there (which signs the
// browser in), and a login with it.
// Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  apiCall,
  checkPage,
  heading,
  inbox,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  newAccount,
  page,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the reset-link journey');
const USER = newAccount('forgetful');
const NEW_PASSWORD = 'a brand new passphrase';

useConsoleService(MISSING);

describe('password reset by the mailed link (npm start, its SES stand-in, Chromium)', () => {
  it('opens the mailed link in the console, sets a new password there, and logs in with it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    const asked = await apiCall('POST', '/auth/password/reset/code', undefined, { email: USER.email });
    expect(asked.status, JSON.stringify(asked)).toBe(200);

    const mail = (await inbox().mails()).findLast((sent) => sent.to === USER.email);
    expect(mail?.subject).toBe('Your password reset code');
    const link = await inbox().linkFor(USER.email);
    // The link opens this console (base_url follows npm start's port); its token is in the HTML part too.
    expect(link.startsWith(`${service.url}/#/reset?token=`)).toBe(true);
    expect(mail?.html).toContain(link);
    // npm start's log names the mail, never the link's token.
    expect(service.output()).toContain(`"to":"${USER.email}","subject":"Your password reset code"`);
    expect(service.output()).not.toContain(new URL(link).hash.split('token=')[1]!);

    await page.goto(link);
    await heading('Reset your password');
    expect(await page.getByLabel('E-mail', { exact: true }).count()).toBe(0);
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await checkPage('reset-by-link');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    // The reset signs the browser in; the new password logs in again after logging out.
    await heading('My files');
    await logOut();
    await logIn(USER.username, NEW_PASSWORD);
    await heading('My files');
    const old = await apiCall('POST', '/auth/login', undefined, {
      username: USER.email,
      password: USER.password,
    });
    expect(old.status).toBe(401);
    // The link worked once.
    const again = await apiCall('POST', '/auth/password/reset', undefined, {
      token: new URL(link).hash.split('token=')[1],
      new_password: 'yet another passphrase',
    });
    expect(again.status).toBe(400);
  });

  it('asks for the second step after a reset by link when TOTP is on, then ends signed in', async (context) => {
    if (MISSING) context.skip(MISSING);
    const { generate } = await import('otplib');
    const owner = newAccount('twostep');
    await registerAccount(owner);
    const token = (await apiCall('POST', '/auth/login', undefined, owner)).data.token;
    const setup = await apiCall('POST', '/auth/totp/setup', token, { password: owner.password });
    const enableCode = await generate({ secret: setup.data.secret });
    expect((await apiCall('POST', '/auth/totp/enable', token, { code: enableCode })).status).toBe(200);
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { clear(): void } }).localStorage.clear(),
    );
    await apiCall('POST', '/auth/password/reset/code', undefined, { email: owner.email });

    // A browser that holds nothing of the account (a fresh load of the console).
    await page.goto('about:blank');
    await page.goto(await inbox().linkFor(owner.email));
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('Your password was changed').waitFor();
    await checkPage('reset-second-step');
    // A code of the next time step: the one enable used is spent.
    const code = await generate({ secret: setup.data.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    await page.getByLabel('Authentication code or recovery code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await heading('My files');
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
