// The account flows as a client sees them: the local HTTP server, the no-mail log fallback for codes.
import { generate } from 'otplib';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Every request comes from 127.0.0.1 here; the IP limit has its own test below with its own server.
  process.env.AUTH__IP_LIMIT_PER_MINUTE = '0';
  process.env.ADMIN__BOOTSTRAP__USERNAME = 'e2e_root';
  process.env.ADMIN__BOOTSTRAP__PASSWORD = 'e2e-root-password';
});

import { useLocalApp } from '#test/support/local-app.ts';
import { captureLog } from '#test/support/mail.ts';

const log = captureLog();
afterAll(() => log.stop());
const app = useLocalApp();

const post = (path: string, body: object, token?: string) => app.request('POST', path, { body, token });
const get = (path: string, token?: string) => app.request('GET', path, { token });
const totp = (secret: string, offsetSeconds = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

describe('account flows over HTTP', () => {
  it('registers, logs in, turns TOTP on, rebinds the e-mail, changes and resets the password', async () => {
    const email = `e2e-${Date.now()}@example.test`;
    expect((await post('/auth/register/code', { email })).status).toBe(200);
    const code = log.codeFor(email);
    const registered = await post('/api/v1/auth/register', {
      username: 'e2e_user',
      email,
      code,
      password: 'e2e-password-1',
    });
    expect(registered.status).toBe(201);

    const login = await post('/auth/login', { username: email, password: 'e2e-password-1' });
    expect(login.status).toBe(200);
    const token = login.body.data.token as string;
    expect((await get('/auth/me', token)).body.data.username).toBe('e2e_user');

    const setup = await post('/auth/totp/setup', { password: 'e2e-password-1' }, token);
    const secret = setup.body.data.secret as string;
    expect((await post('/auth/totp/enable', { code: await totp(secret, -30) }, token)).status).toBe(200);
    const challenged = await post('/auth/login', { username: 'e2e_user', password: 'e2e-password-1' });
    expect(challenged.body.data).toMatchObject({ totp_required: true });
    expect(challenged.body.data.user).toBeUndefined();
    expect((await get('/auth/me', challenged.body.data.challenge_token)).status).toBe(403);
    const verified = await post('/auth/totp/verify', {
      challenge_token: challenged.body.data.challenge_token,
      code: await totp(secret),
    });
    expect(verified.status).toBe(200);
    const session = verified.body.data.token as string;

    const next = `e2e-next-${Date.now()}@example.test`;
    expect((await post('/auth/email/code', { email: next }, session)).status).toBe(200);
    const rebound = await post(
      '/auth/email/verify',
      { email: next, code: log.codeFor(next), password: 'e2e-password-1' },
      session,
    );
    expect(rebound.status).toBe(200);
    expect(log.mails().some((mail) => mail.to === email && /changed/.test(mail.subject))).toBe(true);

    const changed = await post(
      '/auth/password',
      { current_password: 'e2e-password-1', new_password: 'e2e-password-2' },
      session,
    );
    expect(changed.status).toBe(200);
    expect((await get('/auth/me', session)).status).toBe(401);

    expect((await post('/auth/password/reset/code', { email: next })).status).toBe(200);
    const reset = await post('/auth/password/reset', {
      email: next,
      code: log.codeFor(next),
      new_password: 'e2e-password-3',
    });
    expect(reset.status).toBe(200);
    expect((await get('/auth/me', changed.body.data.token)).status).toBe(401);
    const relogin = await post('/auth/login', { username: 'e2e_user', password: 'e2e-password-3' });
    expect(relogin.body.data.totp_required).toBe(true);

    // Nothing secret in the log but the codes of the fallback lines.
    const text = log.lines.filter((line) => !line.includes('"message":"mail"')).join('\n');
    for (const secretText of ['e2e-password-1', 'e2e-password-2', 'e2e-password-3', secret, 'argon2id']) {
      expect(text).not.toContain(secretText);
    }
  });

  it('creates the bootstrap administrator, who logs in at the admin door only and creates administrators', async () => {
    const admin = await post('/admin/auth/login', { username: 'e2e_root', password: 'e2e-root-password' });
    expect(admin.status).toBe(200);
    expect((await post('/auth/login', { username: 'e2e_root', password: 'e2e-root-password' })).status).toBe(
      401,
    );
    const created = await post(
      '/api/v1/admin/accounts',
      {
        username: 'e2e_admin2',
        email: 'admin2@example.test',
        password: 'admin2-password',
        current_password: 'e2e-root-password',
      },
      admin.body.data.token,
    );
    expect(created.status).toBe(201);
    expect(created.body.data.role).toBe('admin');
  });

  it('lets one of 20 concurrent HTTP registrations of a username win and admits 2 of 10 code sends', async () => {
    const emails = Array.from({ length: 20 }, (_, i) => `race${i}-${Date.now()}@example.test`);
    await Promise.all(emails.map((email) => post('/auth/register/code', { email })));
    const results = await Promise.all(
      emails.map((email) =>
        post('/auth/register', {
          username: 'e2e_racer',
          email,
          code: log.codeFor(email),
          password: 'race-password',
        }),
      ),
    );
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
    expect(results.filter((res) => res.status === 409)).toHaveLength(19);

    const target = `burst-${Date.now()}@example.test`;
    const sends = await Promise.all(
      Array.from({ length: 10 }, () => post('/auth/register/code', { email: target })),
    );
    expect(sends.filter((res) => res.status === 200)).toHaveLength(2);
    const limited = sends.find((res) => res.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers malformed and invalid bodies with a 400 envelope naming the field', async () => {
    const response = await fetch(`${app.url}/auth/login`, { method: 'POST', body: '{"username":' });
    expect(response.status).toBe(400);
    const invalid = await post('/auth/register', {
      username: 'ok_name',
      email: 'nope',
      code: '123456',
      password: 'long-enough',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toMatch(/^email:/);
  });
});
