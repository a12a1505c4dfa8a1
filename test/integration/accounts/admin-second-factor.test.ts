// Issue 39: under `admin.require_second_factor` an administrator without TOTP or a passkey can do nothing but
// set one up: every other route of every group answers 403 saying so, sessions and API tokens alike; once
// TOTP is on (or a passkey added) the same session does everything. Users are never affected, and with the
// setting off an administrator without a second factor is served as before.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { adminSecondFactorRequired } from '#lib/platform/config/schema.ts';
import { authHarness } from '#test/support/accounts.ts';
import { addPasskey } from '#test/support/passkeys.ts';
import { testSettings } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { SoftAuthenticator } from '#test/support/webauthn.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;
const PASSWORD = 'admin-password-1';

async function administrator(h: Harness) {
  const account = await h.accounts.repository.create({
    username: `chief_${randomBytes(4).toString('hex')}`,
    email: `chief_${randomBytes(4).toString('hex')}@example.test`,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(PASSWORD),
  });
  const login = await h.call('POST', '/admin/auth/login', { username: account.username, password: PASSWORD });
  expect(login.status).toBe(200);
  return { account, token: login.body.data.token as string, password: PASSWORD };
}

/** One route of each group an administrator uses, beyond setting up a second factor. */
const ELSEWHERE = [
  ['GET', '/api/v1/admin/accounts', 'accounts'],
  ['GET', '/auth/sessions', 'accounts'],
  ['GET', '/api/v1/files', 'files'],
  ['GET', '/api/v1/admin/audit', 'files'],
  ['GET', '/api/v1/admin/orders', 'payments'],
] as const;

const SETUP = [
  ['GET', '/auth/me'],
  ['GET', '/api/v1/auth/security'],
  ['GET', '/auth/passkeys'],
] as const;

describe('an administrator without a second factor, when one is required', () => {
  it('is refused everything but setting one up; with TOTP on, the same session does everything', async () => {
    // Prepare
    const h = authHarness({ requireAdminSecondFactor: true });
    const admin = await administrator(h);
    const user = await h.registerUser();

    // Act
    const refused = await Promise.all(
      ELSEWHERE.map(([method, path, group]) =>
        h.call(method, path, undefined, { token: admin.token, group }),
      ),
    );
    const allowed = await Promise.all(
      SETUP.map(([method, path]) => h.call(method, path, undefined, { token: admin.token })),
    );
    const userServed = await h.call('GET', '/auth/sessions', undefined, { token: user.token });
    await h.enableTotp({ token: admin.token, password: admin.password });
    const afterTotp = await Promise.all(
      ELSEWHERE.map(([method, path, group]) =>
        h.call(method, path, undefined, { token: admin.token, group }),
      ),
    );

    // Assess
    for (const answer of refused) {
      expect(answer.status, answer.raw).toBe(403);
      expect(answer.body.message).toMatch(/second factor \(TOTP or a passkey\) first/);
      expect(answer.body.data).toEqual({ second_factor_required: true });
    }
    for (const answer of allowed) expect(answer.status, answer.raw).toBe(200);
    expect(allowed[1]?.body.data).toMatchObject({ totp_enabled: false });
    expect(userServed.status).toBe(200);
    for (const answer of afterTotp) expect(answer.status, answer.raw).toBe(200);
  });

  it('may add a passkey instead, after which it is served', async () => {
    const h = authHarness({ requireAdminSecondFactor: true });
    const admin = await administrator(h);
    expect((await h.call('GET', '/api/v1/admin/accounts', undefined, { token: admin.token })).status).toBe(
      403,
    );

    await addPasskey(h, admin, new SoftAuthenticator());

    expect((await h.call('GET', '/api/v1/admin/accounts', undefined, { token: admin.token })).status).toBe(
      200,
    );
  });

  it('cannot act through an API token either', async () => {
    const h = authHarness({ requireAdminSecondFactor: true });
    const admin = await administrator(h);
    // Made while the rule was off (an older deployment): the token is refused once it is on.
    const before = authHarness({ requireAdminSecondFactor: false });
    const session = await before.call('POST', '/admin/auth/login', {
      username: admin.account.username,
      password: PASSWORD,
    });
    const made = await before.call(
      'POST',
      '/api/v1/tokens',
      { name: 'old token' },
      { token: session.body.data.token, group: 'files' },
    );
    expect(made.status, made.raw).toBe(201);

    const listed = await h.call('GET', '/api/v1/files', undefined, {
      token: made.body.data.token,
      group: 'files',
    });

    expect(listed.status).toBe(403);
  });
});

describe('with the rule off', () => {
  it('serves an administrator without a second factor, as before', async () => {
    const h = authHarness({ requireAdminSecondFactor: false });
    const admin = await administrator(h);

    const answer = await h.call('GET', '/api/v1/admin/accounts', undefined, { token: admin.token });

    expect(answer.status).toBe(200);
  });

  it('is on by default in production and off elsewhere, unless set', () => {
    const settings = testSettings();
    const at = (stage: string, value?: boolean) =>
      adminSecondFactorRequired({
        ...settings,
        stage,
        deployment: {},
        admin: { ...settings.admin, ...(value === undefined ? {} : { require_second_factor: value }) },
      });
    expect([at('prod'), at('production'), at('dev'), at('test'), at('prod', false), at('dev', true)]).toEqual(
      [true, true, false, false, false, true],
    );
  });
});
