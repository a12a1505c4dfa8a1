// Sign in with another provider in the console (docs/ACCOUNTS.md "Sign in with another provider"), in a real
// Chromium against `npm start` (through harness.ts) and a real OIDC issuer on 127.0.0.1 (oidc-provider, its
// own login page): a first sign-in picks a username and lands on My files; an account with TOTP linked to
// the issuer gets the TOTP step. Skips itself, saying why, when Chromium is absent.
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { browserMissing } from '#test/support/browser.ts';
import { CLIENT, callbackOf, type People, startOidcIssuer } from '#test/support/sign-in-providers.ts';
import {
  apiCall,
  checkPage,
  heading,
  itRanWithoutPolicyViolations,
  logOut,
  newAccount,
  page,
  registerAccount,
  service,
  useConsoleService,
} from './harness.ts';

const MISSING = browserMissing('the web console sign-in provider journeys');
const run = Date.now().toString(36);
const people: People = new Map([
  [`jo${run}`, { email: `jo-${run}@example.test`, email_verified: true }],
  [`tt${run}`, { email: `tt-${run}@example.test`, email_verified: true }],
]);
const env: Record<string, string> = {};
let issuer: Awaited<ReturnType<typeof startOidcIssuer>> | undefined;

// Before npm start: its port is known, so the issuer's client can name the callback.
beforeAll(async () => {
  if (MISSING) return;
  const port = await freePort();
  env.PORT = String(port);
  issuer = await startOidcIssuer([callbackOf(`http://localhost:${port}`, 'local')], people);
  env.AUTH__PROVIDERS = JSON.stringify([
    {
      id: 'local',
      kind: 'oidc',
      label: 'Local ID',
      issuer: issuer.issuer,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    },
  ]);
});
afterAll(async () => {
  await issuer?.close();
});
useConsoleService(MISSING, env);

/** The issuer's own login page (oidc-provider's dev interactions): any login, the login is the subject. */
async function logInAtIssuer(login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
}

describe('sign in with another provider (npm start, Chromium, oidc-provider)', () => {
  it('creates the account on a first sign-in through the issuer’s login page and lands on My files', async (context) => {
    if (MISSING) context.skip(MISSING);
    await page.goto(`${service.url}/#/login`);
    await heading('Log in');
    await page.getByRole('link', { name: 'Sign in with Local ID' }).click();
    await logInAtIssuer(`jo${run}`);
    await heading('Sign in with another provider');
    await page.getByText(`(jo-${run}@example.test) has no account here yet`).waitFor();
    // The ticket left the address before it was exchanged.
    expect(new URL(page.url()).hash).toBe('#/oauth');
    await checkPage('oauth-username');
    await page.getByLabel('Username').fill(`jo${run}`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('My files');
  });

  it('asks for the TOTP code when the linked account has TOTP', async (context) => {
    if (MISSING) context.skip(MISSING);
    const user = newAccount('tt');
    await registerAccount(user);
    const token = (await apiCall('POST', '/auth/login', undefined, user)).data.token as string;
    const setup = await apiCall('POST', '/auth/totp/setup', token, { password: user.password });
    const secret = setup.data.secret as string;
    const enabled = await apiCall('POST', '/auth/totp/enable', token, {
      code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }),
    });
    expect(enabled.status).toBe(200);
    await logOut();
    // The issuer forgets the first person, so its login page shows again.
    await page.context().clearCookies();
    const link = await apiCall('POST', '/auth/identities/local', token, { current_password: user.password });
    expect(link.status, JSON.stringify(link)).toBe(200);
    await page.goto(link.data.url as string);
    await logInAtIssuer(`tt${run}`);
    await page.getByText('Linked: you may now sign in with Local ID.').waitFor();
    await page.goto(`${service.url}/#/login`);
    await heading('Log in');
    await page.getByRole('link', { name: 'Sign in with Local ID' }).click();
    await page.getByText('Enter the code from your authenticator app').waitFor();
    await page.getByLabel('Authentication code or recovery code').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await heading('My files');
  });
});

itRanWithoutPolicyViolations(MISSING);
