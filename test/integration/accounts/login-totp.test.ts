import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { challengeKey } from '#lib/accounts/challenge.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const totpAt = (secret: string, date: Date) => generate({ secret, epoch: Math.floor(date.getTime() / 1000) });

async function withTotp(h: ReturnType<typeof authHarness>, clock: () => Date) {
  const user = await h.registerUser();
  const setup = await h.call('POST', '/auth/totp/setup', { password: user.password }, { token: user.token });
  expect(setup.status).toBe(200);
  const { secret, uri } = setup.body.data;
  expect(uri).toMatch(/^otpauth:\/\/totp\//);
  expect(uri).toContain(`secret=${secret}`);
  const enabled = await h.call(
    'POST',
    '/auth/totp/enable',
    { code: await totpAt(secret, clock()) },
    { token: user.token },
  );
  expect(enabled.status).toBe(200);
  expect(enabled.body.data).toMatchObject({ totp_enabled: true, totp_pending: false });
  return { ...user, secret: secret as string };
}

describe('login', () => {
  it('logs in by username or e-mail (any case) and returns the session shape', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    for (const username of [user.username, user.username.toUpperCase(), user.email.toUpperCase()]) {
      const res = await h.call('POST', '/auth/login', { username, password: user.password });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ token_type: 'Bearer', user: { id: user.id, role: 'user' } });
      expect(res.body.data.expires_at).toMatch(/\+00:00$/);
      expect(res.raw).not.toMatch(/argon2|password_hash/);
    }
    const prefixed = await h.call('POST', '/api/v1/auth/login', {
      username: user.username,
      password: user.password,
    });
    expect(prefixed.status).toBe(200);
  });

  it('answers a wrong password, an unknown user and the wrong door with one identical 401', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const admin = await h.accounts.repository.create({
      username: `adm_${Date.now()}`,
      email: null,
      emailVerified: false,
      role: 'admin',
      passwordHash: await hashPassword('admin-password-1'),
    });
    const answers = await Promise.all([
      h.call('POST', '/auth/login', { username: user.username, password: 'wrong-password' }),
      h.call('POST', '/auth/login', { username: 'no_such_user', password: user.password }),
      h.call('POST', '/admin/auth/login', { username: user.username, password: user.password }),
      h.call('POST', '/auth/login', { username: admin.username, password: 'admin-password-1' }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.raw).toBe(answers[0]!.raw);
    }
    const right = await h.call('POST', '/api/v1/admin/auth/login', {
      username: admin.username,
      password: 'admin-password-1',
    });
    expect(right.status).toBe(200);
    expect(right.body.data.user.role).toBe('admin');
  });

  it('re-hashes a password stored with old parameters on login', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const { hash } = await import('@node-rs/argon2');
    const weak = await hash(user.password, { memoryCost: 4096, timeCost: 1, parallelism: 1, algorithm: 2 });
    await h.table.update(accountKey(user.id), {
      UpdateExpression: 'SET password_hash = :h',
      ExpressionAttributeValues: { ':h': weak },
    });
    expect(
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).status,
    ).toBe(200);
    const stored = (await h.accounts.repository.get(user.id))!.password_hash;
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('serves me and security, and ends a session on logout only', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const second = (await h.call('POST', '/auth/login', { username: user.username, password: user.password }))
      .body.data.token;
    const me = await h.call('GET', '/auth/me', undefined, { token: user.token });
    expect(me.body.data).toEqual({
      id: user.id,
      username: user.username,
      email: user.email,
      email_verified: true,
      role: 'user',
      totp_enabled: false,
      created_at: expect.stringMatching(/\+00:00$/),
    });
    const security = await h.call('GET', '/api/v1/auth/security', undefined, { token: user.token });
    expect(security.body.data).toEqual({
      totp_enabled: false,
      totp_pending: false,
      email: user.email,
      email_verified: true,
      recovery_codes_remaining: 0,
      passkeys: 0,
      deletion_scheduled_for: null,
    });
    expect((await h.call('POST', '/auth/logout', {}, { token: user.token })).status).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
    expect((await h.call('GET', '/auth/me', undefined, { token: second })).status).toBe(200);
    expect((await h.call('GET', '/auth/me')).status).toBe(401);
  });

  it("stops a disabled or deleted account's sessions; a disabled login is 403 only with the right password", async () => {
    const h = authHarness();
    const disabled = await h.registerUser();
    await h.table.update(accountKey(disabled.id), {
      UpdateExpression: 'SET #s = :d',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':d': 'disabled' },
    });
    expect((await h.call('GET', '/auth/me', undefined, { token: disabled.token })).status).toBe(401);
    const right = await h.call('POST', '/auth/login', {
      username: disabled.username,
      password: disabled.password,
    });
    expect(right.status).toBe(403);
    expect(right.body.message).toBe('account disabled');
    const wrong = await h.call('POST', '/auth/login', {
      username: disabled.username,
      password: 'not-it-at-all',
    });
    const unknown = await h.call('POST', '/auth/login', {
      username: 'nobody_here_x',
      password: 'not-it-at-all',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.raw).toBe(unknown.raw);
    const deleted = await h.registerUser();
    await h.table.delete(accountKey(deleted.id));
    expect((await h.call('GET', '/auth/me', undefined, { token: deleted.token })).status).toBe(401);
  });

  it('ends sessions after their lifetime (24 h by default)', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    clock.advance(23 * 3600_000);
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(200);
    clock.advance(3600_000 + 1000);
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
  });
});

describe('TOTP', () => {
  it('keeps the setup secret pending and sealed until enable proves a code', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const setup = await h.call(
      'POST',
      '/auth/totp/setup',
      { password: user.password },
      { token: user.token },
    );
    const { secret } = setup.body.data;
    const stored = await h.table.get(accountKey(user.id));
    expect(stored?.totp_pending_enc).toBeTruthy();
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect((await h.call('GET', '/auth/security', undefined, { token: user.token })).body.data).toMatchObject(
      {
        totp_enabled: false,
        totp_pending: true,
      },
    );
    // Still a plain session at login while pending.
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.body.data.token).toBeTruthy();
    const code = await totpAt(secret, clock());
    const wrong = code === '000000' ? '111111' : '000000';
    expect((await h.call('POST', '/auth/totp/enable', { code: wrong }, { token: user.token })).status).toBe(
      400,
    );
    expect((await h.call('POST', '/auth/totp/enable', { code }, { token: user.token })).status).toBe(200);
    expect(
      (await h.call('POST', '/auth/totp/setup', { password: user.password }, { token: user.token })).status,
    ).toBe(409);
    const after = await h.table.get(accountKey(user.id));
    expect(after?.totp_secret_enc).toBeTruthy();
    expect(after?.totp_pending_enc).toBeUndefined();
  });

  it('answers login with a challenge only, usable once at /auth/totp/verify and never as a session', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await withTotp(h, clock);
    clock.advance(30_000);
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.status).toBe(200);
    expect(Object.keys(login.body.data).sort()).toEqual([
      'challenge_token',
      'expires_at',
      'methods',
      'totp_required',
    ]);
    expect(login.body.data.totp_required).toBe(true);
    const challenge = login.body.data.challenge_token;
    // Not a session: 403 on session endpoints.
    expect((await h.call('GET', '/auth/me', undefined, { token: challenge })).status).toBe(403);
    // A session is not a challenge.
    const code = await totpAt(user.secret, clock());
    expect((await h.call('POST', '/auth/totp/verify', { challenge_token: user.token, code })).status).toBe(
      401,
    );
    const verified = await h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code });
    expect(verified.status).toBe(200);
    expect(verified.body.data).toMatchObject({
      token_type: 'Bearer',
      user: { id: user.id, totp_enabled: true },
    });
    expect((await h.call('GET', '/auth/me', undefined, { token: verified.body.data.token })).status).toBe(
      200,
    );
    // Single use.
    clock.advance(30_000);
    const next = await totpAt(user.secret, clock());
    expect(
      (await h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code: next })).status,
    ).toBe(401);
  });

  it('never accepts the same time step twice, and accepts one step of drift only', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await withTotp(h, clock);
    clock.advance(60_000);
    const challenge = async () =>
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).body.data
        .challenge_token;
    const code = await totpAt(user.secret, clock());
    expect(
      (await h.call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code })).status,
    ).toBe(200);
    expect(
      (await h.call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code })).status,
    ).toBe(401);
    clock.advance(90_000);
    const previous = await totpAt(user.secret, new Date(clock().getTime() - 30_000));
    const twoBack = await totpAt(user.secret, new Date(clock().getTime() - 60_000));
    const twoAhead = await totpAt(user.secret, new Date(clock().getTime() + 60_000));
    const current = await totpAt(user.secret, clock());
    if (twoBack !== current && twoBack !== previous)
      expect(
        (await h.call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code: twoBack }))
          .status,
      ).toBe(401);
    if (twoAhead !== current && twoAhead !== previous)
      expect(
        (await h.call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code: twoAhead }))
          .status,
      ).toBe(401);
    expect(
      (await h.call('POST', '/auth/totp/verify', { challenge_token: await challenge(), code: previous }))
        .status,
    ).toBe(200);
  });

  it('lets 10 concurrent verifications of one challenge, or of one code on two challenges, yield one session', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await withTotp(h, clock);
    clock.advance(30_000);
    const login = () => h.call('POST', '/auth/login', { username: user.username, password: user.password });
    const challenge = (await login()).body.data.challenge_token;
    const code = await totpAt(user.secret, clock());
    const same = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code }),
      ),
    );
    expect(same.filter((res) => res.status === 200)).toHaveLength(1);
    expect(same.filter((res) => res.status === 401)).toHaveLength(9);
    clock.advance(30_000);
    const challenges = [(await login()).body.data.challenge_token, (await login()).body.data.challenge_token];
    const next = await totpAt(user.secret, clock());
    const racing = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.call('POST', '/auth/totp/verify', { challenge_token: challenges[i % 2], code: next }),
      ),
    );
    expect(racing.filter((res) => res.status === 200)).toHaveLength(1);
  });

  it('caps wrong codes per challenge at 5 and expires a challenge after 5 minutes', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await withTotp(h, clock);
    clock.advance(30_000);
    const login = () => h.call('POST', '/auth/login', { username: user.username, password: user.password });
    const challenge = (await login()).body.data.challenge_token;
    const code = await totpAt(user.secret, clock());
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect(
        (await h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code: wrong })).status,
      ).toBe(401);
    }
    expect((await h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code })).status).toBe(
      401,
    );
    const item = await h.table.get(
      challengeKey((await h.signer.verify(challenge, 'totp_challenge', clock())).jti),
    );
    expect(item?.attempts).toBe(5);
    const late = (await login()).body.data.challenge_token;
    clock.advance(5 * 60_000 + 1000);
    const lateCode = await totpAt(user.secret, clock());
    expect(
      (await h.call('POST', '/auth/totp/verify', { challenge_token: late, code: lateCode })).status,
    ).toBe(401);
  });

  it('caps TOTP tries per account across challenges with 429', async () => {
    const clock = movableClock();
    const h = authHarness({ clock, limits: { totpLogin: { perMinute: 1, burst: 3 } } });
    const user = await withTotp(h, clock);
    const wrong = '000000';
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const challenge = (
        await h.call('POST', '/auth/login', { username: user.username, password: user.password })
      ).body.data.challenge_token;
      statuses.push(
        (await h.call('POST', '/auth/totp/verify', { challenge_token: challenge, code: wrong })).status,
      );
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
  });

  it('disables with a valid code or the password, refusing wrong ones', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await withTotp(h, clock);
    clock.advance(30_000);
    const { token } = user;
    expect((await h.call('POST', '/auth/totp/disable', {}, { token })).status).toBe(400);
    expect(
      (await h.call('POST', '/auth/totp/disable', { password: 'not-the-password' }, { token })).status,
    ).toBe(400);
    const code = await totpAt(user.secret, clock());
    const wrong = code === '000000' ? '111111' : '000000';
    expect((await h.call('POST', '/auth/totp/disable', { code: wrong }, { token })).status).toBe(400);
    const off = await h.call('POST', '/auth/totp/disable', { code }, { token });
    expect(off.status).toBe(200);
    expect(off.body.data.totp_enabled).toBe(false);
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.body.data.token).toBeTruthy();
    expect((await h.call('POST', '/auth/totp/disable', { password: user.password }, { token })).status).toBe(
      409,
    );
    // Again on, then off by password.
    clock.advance(30_000);
    const setup = await h.call('POST', '/auth/totp/setup', { password: user.password }, { token });
    await h.call(
      'POST',
      '/auth/totp/enable',
      { code: await totpAt(setup.body.data.secret, clock()) },
      { token },
    );
    expect((await h.call('POST', '/auth/totp/disable', { password: user.password }, { token })).status).toBe(
      200,
    );
  });
});
