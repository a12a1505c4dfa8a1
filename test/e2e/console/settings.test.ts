// The console's account settings and back-office forms in a real Chromium against `npm start` (as in
// journeys.test.ts, through harness.ts): binding and unbinding an e-mail, changing the password, revoking
// another session, turning TOTP off; and for an administrator, creating an administrator, creating and
// editing a plan, saving payment settings whose secrets are write-only, and switching the mock cashier with
// the password. Each form is driven by its labels and buttons; plain HTTP only sets up state or checks what
// the page cannot show (the API's view, another session's token). Skips itself, saying why, when Chromium is
// absent.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { browserMissing } from '#test/support/browser.ts';
import {
  ADMIN,
  adminToken,
  apiCall,
  checkPage,
  consoleSessionToken,
  heading,
  inbox,
  itRanWithoutPolicyViolations,
  logIn,
  logOut,
  mailedCode,
  newAccount,
  page,
  poll,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console settings journeys');
const RUN = Date.now().toString(36);
const USER = newAccount('settler', 'first password here');
const NEW_EMAIL = `moved-${RUN}@example.test`;
const NEW_PASSWORD = 'second password here';
const NEW_ADMIN = newAccount('deputy', 'deputy password 1');
const PLAN = `Team ${RUN}`;
const CHANNEL_C_KEY = `md5-secret-${RUN}-do-not-show`;

useConsoleService(MISSING);

function openFromMenu(link: string) {
  return page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: link, exact: true })
    .click();
}

describe('web console settings and back office (npm start, Chromium)', () => {
  it('binds another e-mail with the code mailed to it, then unbinds it', async (context) => {
    if (MISSING) context.skip(MISSING);
    await registerAccount(USER);
    await page.goto(`${service.url}/`);
    await logIn(USER.username, USER.password);
    await heading('My files');
    await openFromMenu('Security');
    await heading('Security');

    const email = page.getByRole('region', { name: 'E-mail', exact: true });
    await email.getByText(`${USER.email} (verified)`).waitFor();
    const bind = email.getByRole('form', { name: 'Bind an e-mail' });
    await bind.getByLabel('E-mail to bind').fill(NEW_EMAIL);
    await bind.getByRole('button', { name: 'Send code' }).click();
    await bind.getByText(`A code was sent to ${NEW_EMAIL}.`).waitFor();
    await bind.getByLabel('E-mail code').fill(await mailedCode(NEW_EMAIL));
    await bind.getByLabel('Current password').fill(USER.password);
    await checkPage('security-email-bind');
    await bind.getByRole('button', { name: 'Bind e-mail' }).click();
    await email.getByText(`${NEW_EMAIL} (verified)`).waitFor();

    // The new address logs in, the old one no longer does, and the old one was told of the change.
    const login = (username: string) =>
      apiCall('POST', '/auth/login', undefined, { username, password: USER.password });
    expect((await login(NEW_EMAIL)).status).toBe(200);
    expect((await login(USER.email)).status).toBe(401);
    await poll(async () =>
      (await inbox().mails()).some(
        (mail) => mail.to === USER.email && mail.subject === 'Your account e-mail address was changed',
      ),
    ).toBe(true);

    const unbind = email.getByRole('form', { name: 'Unbind the e-mail' });
    await unbind.getByLabel('Current password').fill(USER.password);
    await unbind.getByRole('button', { name: 'Unbind e-mail' }).click();
    await email.getByText('No e-mail is bound.').waitFor();
    expect(await unbind.count()).toBe(0);
    expect((await login(NEW_EMAIL)).status).toBe(401);
    const security = await apiCall('GET', '/api/v1/auth/security', await consoleSessionToken());
    expect(security.data).toMatchObject({ email: null, email_verified: false });
  }, 180_000);

  it('changes the password: the console keeps a live session, the old password is refused, the new one logs in', async (context) => {
    if (MISSING) context.skip(MISSING);
    const before = await consoleSessionToken();
    const password = page.getByRole('region', { name: 'Password', exact: true });
    await password.getByLabel('Current password').fill(USER.password);
    await password.getByLabel('New password').fill(NEW_PASSWORD);
    await password.getByRole('button', { name: 'Change password' }).click();
    await password.getByText(/^Password changed\./).waitFor();

    // The change ended every session; the console holds the fresh one it was given.
    expect((await apiCall('GET', '/api/v1/auth/me', before)).status).toBe(401);
    const after = await consoleSessionToken();
    expect(after).not.toBe(before);
    expect((await apiCall('GET', '/api/v1/auth/me', after)).status).toBe(200);
    await openFromMenu('API tokens');
    await heading('API tokens');
    expect(await page.getByRole('dialog').count()).toBe(0);

    await logOut();
    await logIn(USER.username, USER.password);
    await page.getByRole('alert').waitFor();
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('My files');
  }, 180_000);

  it('lists the sessions and revokes another one, whose token is then refused', async (context) => {
    if (MISSING) context.skip(MISSING);
    const other = await apiCall(
      'POST',
      '/auth/login',
      undefined,
      { username: USER.username, password: NEW_PASSWORD },
      { 'user-agent': 'Second laptop' },
    );
    expect(other.status).toBe(200);
    expect((await apiCall('GET', '/api/v1/auth/me', other.data.token)).status).toBe(200);

    await openFromMenu('Security');
    await heading('Security');
    const sessions = page.getByRole('region', { name: 'Sessions', exact: true });
    const otherRow = sessions.getByRole('listitem').filter({ hasText: 'Second laptop' });
    await otherRow.waitFor();
    const thisRow = sessions.getByRole('listitem').filter({ hasText: '(this session)' });
    expect(await thisRow.getByRole('button').count()).toBe(0);
    await checkPage('security-sessions');

    await otherRow.getByRole('button', { name: /^Revoke/ }).click();
    await poll(() => otherRow.count()).toBe(0);
    expect((await apiCall('GET', '/api/v1/auth/me', other.data.token)).status).toBe(401);
    expect((await apiCall('GET', '/api/v1/auth/me', await consoleSessionToken())).status).toBe(200);
  }, 180_000);

  it('turns TOTP off with the password, after which a login needs no second factor', async (context) => {
    if (MISSING) context.skip(MISSING);
    const token = await consoleSessionToken();
    const setup = await apiCall('POST', '/api/v1/auth/totp/setup', token, { password: NEW_PASSWORD });
    expect(setup.status).toBe(200);
    const enabled = await apiCall('POST', '/api/v1/auth/totp/enable', token, {
      code: await generate({ secret: setup.data.secret }),
    });
    expect(enabled.status).toBe(200);
    const login = () =>
      apiCall('POST', '/auth/login', undefined, { username: USER.username, password: NEW_PASSWORD });
    expect((await login()).data).toMatchObject({ totp_required: true });

    await page.reload();
    await heading('Security');
    const totp = page.getByRole('region', { name: 'Two-factor authentication (TOTP)' });
    await totp.getByText('Two-factor authentication is on.').waitFor();
    await totp.getByLabel('Or the current password').fill(NEW_PASSWORD);
    await totp.getByRole('button', { name: 'Turn off' }).click();
    await totp
      .locator('.notice-warning')
      .getByText(/Two-factor authentication is off/)
      .waitFor();
    await totp.getByRole('button', { name: 'Set up' }).waitFor();

    const direct = await login();
    expect(direct.status).toBe(200);
    expect(direct.data.totp_required).toBeUndefined();
    expect(direct.data.token).toEqual(expect.any(String));
  }, 180_000);

  it("sets the sites allowed to show the owner's files, which the API then holds", async (context) => {
    if (MISSING) context.skip(MISSING);
    await openFromMenu('Embedding');
    await heading('Embedding');
    await page.getByLabel('Sites allowed to show your files').fill('Blog.Example.com\n*.example.net');
    await page.getByLabel(/Serve requests that name no site/).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved: only these sites may show your files.').waitFor();

    const rules = await apiCall('GET', '/api/v1/hotlink', await consoleSessionToken());
    expect(rules.data).toEqual({ hosts: ['blog.example.com', '*.example.net'], allow_empty: false });

    await page.getByLabel('Sites allowed to show your files').fill('not a host/');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: /hosts/ }).waitFor();
  }, 180_000);

  it('lets an administrator create another administrator, who can then log in as one', async (context) => {
    if (MISSING) context.skip(MISSING);
    await logOut();
    await logIn(ADMIN.username, ADMIN.password);
    await heading('Accounts');

    const form = page.getByRole('form', { name: 'New administrator' });
    await form.getByLabel('Username', { exact: true }).fill(NEW_ADMIN.username);
    await form.getByLabel('E-mail', { exact: true }).fill(NEW_ADMIN.email);
    await form.getByLabel('Their password').fill(NEW_ADMIN.password);
    await form.getByLabel('Your password').fill(ADMIN.password);
    await form.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByText(`Administrator ${NEW_ADMIN.username} created`).waitFor();
    const row = page.getByRole('row', { name: new RegExp(NEW_ADMIN.username) });
    await poll(() => row.getByRole('cell', { name: 'admin', exact: true }).count()).toBe(1);
    expect(await form.getByLabel('Their password').inputValue()).toBe('');

    const login = await apiCall('POST', '/admin/auth/login', undefined, {
      username: NEW_ADMIN.username,
      password: NEW_ADMIN.password,
    });
    expect(login.status).toBe(200);
    const me = await apiCall('GET', '/api/v1/auth/me', login.data.token);
    expect(me.data).toMatchObject({ username: NEW_ADMIN.username, email: NEW_ADMIN.email, role: 'admin' });
  }, 180_000);

  it('creates a plan and edits its price, which buyers then see', async (context) => {
    if (MISSING) context.skip(MISSING);
    await openFromMenu('Plans');
    await heading('Plans');
    const create = page.getByRole('form', { name: 'New plan' });
    await create.getByLabel('Name').fill(PLAN);
    await create.getByLabel('Description').fill('Five gibibytes for a month');
    await create.getByLabel('Price in cents').fill('1500');
    await create.getByLabel('Quota in GiB').fill('5');
    await create.getByLabel('Duration in days').fill('30');
    await create.getByLabel('Default retention in days').fill('14');
    await create.getByRole('button', { name: 'Create plan' }).click();
    await page.getByText(`${PLAN} created`).waitFor();
    const row = page.getByRole('row', { name: new RegExp(PLAN) });
    await row.getByRole('cell', { name: '¥15.00', exact: true }).waitFor();

    const onSale = async () =>
      ((await apiCall('GET', '/api/v1/plans')).data as Array<{ name: string }>).find(
        (plan) => plan.name === PLAN,
      );
    expect(await onSale()).toMatchObject({
      amount_cents: 1500,
      quota_bytes: 5 * 1024 ** 3,
      duration_days: 30,
      retention_days: 14,
      description: 'Five gibibytes for a month',
    });

    await row.getByRole('button', { name: `Edit ${PLAN}` }).click();
    const edit = page.getByRole('form', { name: `Edit ${PLAN}` });
    expect(await edit.getByLabel('Price in cents').inputValue()).toBe('1500');
    expect(await edit.getByLabel('Quota in GiB').inputValue()).toBe('5');
    expect(await edit.getByLabel('Default retention in days').inputValue()).toBe('14');
    await edit.getByLabel('Price in cents').fill('1990');
    await checkPage('admin-plan-edit');
    await edit.getByRole('button', { name: 'Save plan' }).click();
    await page.getByText(`${PLAN} saved`).waitFor();
    await row.getByRole('cell', { name: '¥19.90', exact: true }).waitFor();
    expect(await edit.count()).toBe(0);

    // The price changed and nothing else did.
    expect(await onSale()).toMatchObject({
      amount_cents: 1990,
      quota_bytes: 5 * 1024 ** 3,
      duration_days: 30,
      retention_days: 14,
      description: 'Five gibibytes for a month',
    });
    const admin = (await apiCall('GET', '/api/v1/admin/plans', await adminToken())).data as Array<{
      name: string;
      amount_cents: number;
    }>;
    expect(admin.filter((plan) => plan.name === PLAN).map((plan) => plan.amount_cents)).toEqual([1990]);
  }, 180_000);

  it('saves payment settings whose secret is then only said to be set, never shown', async (context) => {
    if (MISSING) context.skip(MISSING);
    await openFromMenu('Payment settings');
    await heading('Payment settings');
    const channel = page.getByRole('form', { name: 'channel_c', exact: true });
    await channel.getByLabel('pid', { exact: true }).fill('10042');
    await channel.getByLabel('gateway url', { exact: true }).fill('https://pay.example.test');
    await channel.getByLabel('key (not set)').fill(CHANNEL_C_KEY);
    // A key or a gateway URL changes only with the administrator's password (docs/PAYMENTS-GUIDE.md).
    await channel.getByLabel('Your password (to change a key or a gateway URL)').fill(ADMIN.password);
    await channel.getByRole('button', { name: 'Save channel_c' }).click();
    await channel.getByText('channel_c saved').waitFor();
    const keyField = channel.getByLabel('key (set; empty keeps it)');
    await keyField.waitFor();
    expect(await keyField.inputValue()).toBe('');

    const token = await adminToken();
    const settings = await apiCall('GET', '/api/v1/admin/payment', token);
    expect(settings.data.channel_c).toMatchObject({
      pid: '10042',
      gateway_url: 'https://pay.example.test',
      key_set: true,
    });
    expect(JSON.stringify(settings)).not.toContain(CHANNEL_C_KEY);

    /** Nothing on the page holds the secret: not its markup, nor any field's value. */
    const pageHoldsSecret = async () =>
      (await page.content()).includes(CHANNEL_C_KEY) ||
      (
        await page
          .locator('input, textarea')
          .evaluateAll((fields) => fields.map((field) => (field as unknown as { value: string }).value))
      ).some((value) => value.includes(CHANNEL_C_KEY));
    expect(await pageHoldsSecret()).toBe(false);

    // Opened again, the page says the key is set and still shows nothing of it; saving with the key left
    // empty keeps it.
    await page.reload();
    await heading('Payment settings');
    const reopened = page.getByRole('form', { name: 'channel_c', exact: true });
    await reopened.getByLabel('key (set; empty keeps it)').waitFor();
    expect(await reopened.getByLabel('pid', { exact: true }).inputValue()).toBe('10042');
    expect(await pageHoldsSecret()).toBe(false);
    await checkPage('admin-payment-saved');
    await reopened.getByLabel('pid', { exact: true }).fill('10043');
    await reopened.getByRole('button', { name: 'Save channel_c' }).click();
    await reopened.getByText('channel_c saved').waitFor();
    const kept = await apiCall('GET', '/api/v1/admin/payment', token);
    expect(kept.data.channel_c).toMatchObject({ pid: '10043', key_set: true });
  }, 180_000);

  it('takes a pasted PEM key with its line breaks, and shows the address each channel notifies', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.reload();
    await heading('Payment settings');
    const channel = page.getByRole('form', { name: 'channel_a', exact: true });
    // The address to give the channel, as the service builds it.
    await channel.getByText(`${service.url}/api/v1/payments/channel_a/callback`).waitFor();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = (key: KeyObject, type: 'pkcs8' | 'spki') => key.export({ type, format: 'pem' }).toString();
    await channel.getByLabel('app id', { exact: true }).fill('2021000000000001');
    await channel.getByLabel('gateway url', { exact: true }).fill('https://openapi.example.test/gateway.do');
    // Pasted whole, line breaks included (a one-line field would join the lines and the API would refuse it).
    await channel.getByLabel('private key (not set)').fill(pem(privateKey, 'pkcs8'));
    await channel.getByLabel('public key (not set)').fill(pem(publicKey, 'spki'));
    await channel.getByLabel('Your password (to change a key or a gateway URL)').fill(ADMIN.password);
    await channel.getByRole('button', { name: 'Save channel_a' }).click();
    await channel.getByText('channel_a saved').waitFor();
    const settings = await apiCall('GET', '/api/v1/admin/payment', await adminToken());
    expect(settings.data.channel_a).toMatchObject({ private_key_set: true, public_key_set: true });
    await checkPage('admin-payment-pem');
  }, 180_000);

  it("switches the mock cashier only with the administrator's password", async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.reload();
    await heading('Payment settings');
    const mock = page.getByRole('form', { name: /^Mock cashier: / });
    await mock.getByRole('heading', { name: 'Mock cashier: on' }).waitFor();

    // Without the password the switch stays where it was, and the field says why.
    await mock.getByRole('button', { name: 'Turn the mock cashier off' }).click();
    await mock.getByText('is required to change a key, a gateway URL or the mock cashier').waitFor();
    const token = await adminToken();
    expect((await apiCall('GET', '/api/v1/admin/payment', token)).data.mock.enabled).toBe(true);

    await mock.getByLabel('Your password (to switch the mock cashier)').fill(ADMIN.password);
    await mock.getByRole('button', { name: 'Turn the mock cashier off' }).click();
    await mock.getByRole('heading', { name: 'Mock cashier: off' }).waitFor();
    expect((await apiCall('GET', '/api/v1/admin/payment', token)).data.mock.enabled).toBe(false);
    await checkPage('admin-payment-mock');

    // Back on, for whatever runs after.
    await mock.getByLabel('Your password (to switch the mock cashier)').fill(ADMIN.password);
    await mock.getByRole('button', { name: 'Turn the mock cashier on' }).click();
    await mock.getByRole('heading', { name: 'Mock cashier: on' }).waitFor();
  }, 180_000);

  itRanWithoutPolicyViolations(MISSING);
});
