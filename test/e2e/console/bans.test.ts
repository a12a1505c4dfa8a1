// The console's bans page in a real Chromium against `npm start` (through harness.ts): an administrator
// bans a network with a reason and an end, sees it listed, is told which field is wrong and that a ban over
// its own address is refused, then lifts it. Skips itself, saying why, when Chromium is absent.
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  heading,
  itRanWithoutPolicyViolations,
  logIn,
  page,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console bans journey');

useConsoleService(MISSING);

describe('web console bans (npm start, Chromium)', () => {
  it('bans a network with a reason and an end, refuses bad input and its own address, and lifts it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/`);
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Bans', exact: true })
      .click();
    await heading('Bans');
    await page.getByText('No address is banned.').waitFor();

    const form = page.getByRole('form', { name: 'New ban' });
    await form.getByLabel('Address or network').fill('not-an-ip');
    await form.getByLabel('Reason').fill('scraping the gallery');
    await form.getByRole('button', { name: 'Ban' }).click();
    await form.getByText('must be an IPv4 or IPv6 address or prefix').waitFor();
    // The console is reached from 127.0.0.1 here: banning it would lock the administrator out.
    await form.getByLabel('Address or network').fill('127.0.0.0/8');
    await form.getByRole('button', { name: 'Ban' }).click();
    await form.getByText('covers your own address', { exact: false }).waitFor();

    await form.getByLabel('Address or network').fill('203.0.113.77/24');
    await form.getByLabel('Ends (empty: permanent)').fill('2099-01-01T00:00');
    await form.getByRole('button', { name: 'Ban' }).click();
    await page.getByRole('cell', { name: '203.0.113.0/24', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'scraping the gallery', exact: true }).waitFor();
    const listed = await apiCall('GET', '/api/v1/admin/bans', await adminToken());
    expect(listed.data.items).toEqual([
      expect.objectContaining({ cidr: '203.0.113.0/24', reason: 'scraping the gallery' }),
    ]);
    expect(listed.data.items[0].expires_at).toMatch(/^209[89]-/);
    await checkPage('admin-bans');

    await page.getByRole('button', { name: 'Lift 203.0.113.0/24' }).click();
    await page.getByRole('status').filter({ hasText: 'Ban on 203.0.113.0/24 lifted' }).waitFor();
    await page.getByText('No address is banned.').waitFor();
    expect((await apiCall('GET', '/api/v1/admin/bans', await adminToken())).data.items).toEqual([]);
  }, 120_000);

  itRanWithoutPolicyViolations(MISSING);
});
