// The account's export and deletion on the console's security page (docs/ACCOUNTS.md "Export", "Deleting
// an account"), in a real Chromium against `npm start` (through harness.ts): an export asked for shows its
// state; a deletion asked with the password shows its date and that logging in cancels it, and the next
// login does. Skips itself, saying why, when Chromium is absent.
import { describe, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  checkPage,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  newAccount,
  page,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console export and deletion');
const USER = newAccount('lc', 'lifecycle owner 1');

useConsoleService(MISSING);

async function securityPage(): Promise<void> {
  await page.getByRole('link', { name: 'Security' }).click();
  await heading('Security');
}

describe('export and deletion on the security page (npm start, Chromium)', () => {
  it('asks for an export and shows its state; schedules the deletion, shows its date, and a login cancels it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/#/login`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    await securityPage();

    await page.getByRole('button', { name: 'Export my data' }).click();
    await page.getByText(/^Export asked .*: (waiting for the worker|being built|ready)/).waitFor();

    const form = page.getByRole('form', { name: 'Delete the account' });
    await form.getByLabel('Current password').fill(USER.password);
    await form.getByRole('button', { name: 'Delete account' }).click();
    await page.getByText(/^This account will be deleted on .*Logging in before then cancels it\.$/).waitFor();
    await checkPage('security-deletion');

    await logOut();
    await logIn(USER.username, USER.password);
    await heading('My files');
    await securityPage();
    await page.getByRole('form', { name: 'Delete the account' }).waitFor();
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
