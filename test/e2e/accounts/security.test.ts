// Account security, second wave (docs/DESIGN.md 10), as a client sees it over HTTP: re-authentication, the QR
// code, recovery codes, the session list, security events, notice mails (the no-mail log fallback), the
// per-account password limit and the back office. Every answer is also checked against the route's
// response schema (and, by the suite, against docs/openapi.json).
import { generate } from 'otplib';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Every request comes from the same address here: the per-address limit is off.
  process.env.AUTH__IP_LIMIT_PER_MINUTE = '0';
  process.env.ADMIN__BOOTSTRAP__USERNAME = 'e2e_root';
  process.env.ADMIN__BOOTSTRAP__PASSWORD = 'e2e-root-password';
});

import { accountsRoutes } from '#functions/accounts/handler.ts';
import type { Accounts } from '#lib/accounts/build.ts';
import type { RouteImpls } from '#lib/http/handler.ts';
import { matchRoute, type RouteKey, routeKeyOf } from '#lib/http/routes.ts';
import type { Answer } from '#test/support/http-client.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { captureLog } from '#test/support/mail.ts';

const ROUTES: RouteImpls = accountsRoutes(() => ({}) as Accounts);
const PASSWORD = 'e2e-password-1';
const ROOT_PASSWORD = 'e2e-root-password';

const log = captureLog();
afterAll(() => log.stop());
const app = useLocalApp();

/** One request; a success's `data` must match the route's response schema. */
async function call(method: string, path: string, body?: object, token?: string): Promise<Answer> {
  const answer = await app.request(method, path, {
    body,
    token,
    headers: { 'user-agent': 'e2e-client/1.0' },
  });
  const match = matchRoute(method, new URL(path, app.url).pathname);
  const schema =
    match &&
    ROUTES[routeKeyOf({ ...match.route, path: match.route.aliasOf ?? match.route.path }) as RouteKey]
      ?.response;
  if (answer.status < 300 && schema) {
    const parsed = schema.safeParse(answer.body.data);
    expect(parsed.success, `${method} ${path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  }
  return answer;
}

const totpNow = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
const mailsTo = (to: string) => log.mails().filter((mail) => mail.to === to);

describe('account security over HTTP', () => {
  const email = `sec-${Date.now()}@example.test`;
  const user = { username: 'e2e_sec_user', token: '', secret: '', codes: [] as string[] };

  it('registers and turns TOTP on only with the password, with a QR code and recovery codes', async () => {
    expect((await call('POST', '/auth/register/code', { email })).status).toBe(200);
    const registered = await call('POST', '/auth/register', {
      username: user.username,
      email,
      code: log.codeFor(email),
      password: PASSWORD,
    });
    expect(registered.status).toBe(201);
    user.token = (
      await call('POST', '/auth/login', { username: user.username, password: PASSWORD })
    ).body.data.token;

    const stolen = await call('POST', '/auth/totp/setup', {}, user.token);
    expect(stolen.status).toBe(400);
    expect(stolen.body.message).toMatch(/^password:/);
    const setup = await call('POST', '/api/v1/auth/totp/setup', { password: PASSWORD }, user.token);
    expect(setup.status).toBe(200);
    expect(setup.body.data.qr_data_url).toMatch(/^data:image\/svg\+xml;base64,/);
    user.secret = setup.body.data.secret;

    const enabled = await call('POST', '/auth/totp/enable', { code: await totpNow(user.secret) }, user.token);
    expect(enabled.status).toBe(200);
    expect(enabled.body.data.totp_enabled).toBe(true);
    user.codes = enabled.body.data.recovery_codes;
    expect(user.codes).toHaveLength(10);
    expect(mailsTo(email).some((mail) => mail.subject === 'Two-step verification was turned on')).toBe(true);
  });

  it('logs in with a recovery code once, and tells the owner', async () => {
    const challenge = async () =>
      (await call('POST', '/auth/login', { username: user.username, password: PASSWORD })).body.data
        .challenge_token as string;
    const code = user.codes[0]!.toUpperCase();
    const verified = await call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code });
    expect(verified.status).toBe(200);
    user.token = verified.body.data.token;
    expect(
      (await call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code })).status,
    ).toBe(401);
    expect(
      (await call('GET', '/auth/security', undefined, user.token)).body.data.recovery_codes_remaining,
    ).toBe(9);
    expect(mailsTo(email).some((mail) => mail.subject === 'A recovery code was used to sign in')).toBe(true);
    const regenerated = await call('POST', '/auth/totp/recovery-codes', { password: PASSWORD }, user.token);
    expect(regenerated.body.data.recovery_codes).toHaveLength(10);
    user.codes = regenerated.body.data.recovery_codes;
  });

  it('says a replayed TOTP code was already used', async () => {
    const code = await totpNow(user.secret);
    const challenge = (await call('POST', '/auth/login', { username: user.username, password: PASSWORD }))
      .body.data.challenge_token;
    const verified = await call('POST', '/auth/totp/verify', { challenge_token: challenge, code });
    if (verified.status === 200) {
      const replayed = await call('POST', '/auth/totp/disable', { code }, verified.body.data.token);
      expect(replayed.status).toBe(400);
      expect(replayed.body.message).toMatch(/^code: was already used/);
    } else {
      // This time step was spent by enable a moment ago: the login itself is the replay.
      expect(verified.status).toBe(401);
      expect(verified.body.message).toMatch(/^code: was already used/);
    }
  });

  it('lists sessions with address and user agent, ends one, and ends all others', async () => {
    const listed = await call('GET', '/auth/sessions', undefined, user.token);
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBeGreaterThanOrEqual(2);
    const current = listed.body.data.find((session: { current: boolean }) => session.current);
    expect(current).toMatchObject({ user_agent: 'e2e-client/1.0' });
    expect(current.ip).toBeTruthy();
    const other = listed.body.data.find((session: { current: boolean }) => !session.current);
    expect((await call('DELETE', `/auth/sessions/${other.id}`, undefined, user.token)).status).toBe(200);
    expect((await call('DELETE', `/auth/sessions/${other.id}`, undefined, user.token)).status).toBe(404);
    const revoked = await call('POST', '/api/v1/auth/sessions/revoke-others', {}, user.token);
    expect(revoked.status).toBe(200);
    const after = await call('GET', '/auth/sessions', undefined, user.token);
    expect(after.body.data).toHaveLength(1);
  });

  it('shows the security events newest first, in pages', async () => {
    const first = await call('GET', '/auth/security/events?limit=2', undefined, user.token);
    expect(first.status).toBe(200);
    expect(first.body.data.items[0].type).toBe('session_revoked');
    expect(first.body.data.next_cursor).toBeTruthy();
    const next = await call(
      'GET',
      `/auth/security/events?limit=50&cursor=${first.body.data.next_cursor}`,
      undefined,
      user.token,
    );
    const types = [...first.body.data.items, ...next.body.data.items].map(
      (event: { type: string }) => event.type,
    );
    for (const type of ['totp_enabled', 'recovery_code_used', 'recovery_codes_regenerated', 'login']) {
      expect(types).toContain(type);
    }
  });

  it('lets an administrator find, disable, enable and reset the TOTP of the account', async () => {
    const admin = (await call('POST', '/admin/auth/login', { username: 'e2e_root', password: ROOT_PASSWORD }))
      .body.data.token as string;
    expect(
      (
        await call(
          'POST',
          '/api/v1/admin/accounts',
          { username: 'e2e_ops', email: 'ops@example.test', password: 'ops-password' },
          admin,
        )
      ).status,
    ).toBe(400);
    const found = await call('GET', '/api/v1/admin/accounts?q=E2E_SEC', undefined, admin);
    expect(found.body.data.items).toHaveLength(1);
    const { id } = found.body.data.items[0];
    expect(found.body.data.items[0]).toMatchObject({
      username: user.username,
      status: 'active',
      usage: { used_bytes: 0, file_count: 0, quota_bytes: 1024 ** 3, bandwidth_bytes_used: 0 },
    });
    expect((await call('GET', '/api/v1/admin/accounts', undefined, user.token)).status).toBe(403);

    expect((await call('PATCH', `/api/v1/admin/accounts/${id}`, { status: 'disabled' }, admin)).status).toBe(
      200,
    );
    expect((await call('GET', '/auth/me', undefined, user.token)).status).toBe(401);
    const refused = await call('POST', '/auth/login', { username: user.username, password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('account disabled');
    expect((await call('PATCH', `/api/v1/admin/accounts/${id}`, { status: 'active' }, admin)).status).toBe(
      200,
    );

    const reset = await call('POST', `/api/v1/admin/accounts/${id}/totp/reset`, {}, admin);
    expect(reset.status).toBe(200);
    expect(reset.body.data.totp_enabled).toBe(false);
    expect(mailsTo(email).some((mail) => /reset by an administrator/.test(mail.subject))).toBe(true);
    const login = await call('POST', '/auth/login', { username: user.username, password: PASSWORD });
    expect(login.body.data.token).toBeTruthy();
  });

  it('answers 429 with Retry-After after 10 wrong passwords for one account, without checking more', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 11; n++) {
      statuses.push(
        (await call('POST', '/auth/login', { username: user.username, password: `wrong-${n}-pw` })).status,
      );
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429]);
    const locked = await call('POST', '/auth/login', { username: user.username, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('never writes a password or a recovery code to the log', () => {
    const text = log.lines
      .filter((line) => !line.includes('"message":"mail"'))
      .join('\n')
      .toLowerCase();
    for (const secret of [
      PASSWORD,
      ROOT_PASSWORD,
      ...user.codes,
      ...user.codes.map((code) => code.replace('-', '')),
    ]) {
      expect(text).not.toContain(secret.toLowerCase());
    }
    const mails = log.lines
      .filter((line) => line.includes('"message":"mail"'))
      .join('\n')
      .toLowerCase();
    for (const code of user.codes) expect(mails).not.toContain(code);
  });
});
