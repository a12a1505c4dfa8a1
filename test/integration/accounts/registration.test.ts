import { beforeAll, describe, expect, it } from 'vitest';
import { codeKey } from '#lib/accounts/codes.ts';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

let n = 0;
const unique = (label: string) => `${label}${Date.now().toString(36)}${n++}`;

describe('registration', () => {
  it('registers an ordinary user with a verified e-mail and consumes the code', async () => {
    const h = authHarness();
    const email = `${unique('reg')}@example.test`;
    const sent = await h.call('POST', '/auth/register/code', { email });
    expect(sent.status).toBe(200);
    expect(sent.body.data.expires_at).toMatch(/\+00:00$/);
    const code = h.mail.codeFor(email);
    expect(code).toMatch(/^\d{6}$/);
    const username = unique('Reg_');
    const created = await h.call('POST', '/auth/register', {
      username,
      email,
      code,
      password: 'pw-12345678',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      username,
      email,
      email_verified: true,
      role: 'user',
      totp_enabled: false,
    });
    expect(created.raw).not.toMatch(/password|argon2/);
    // Single use: the same code cannot register again.
    const again = await h.call('POST', '/auth/register', {
      username: unique('other_'),
      email,
      code,
      password: 'pw-12345678',
    });
    expect(again.status).toBe(409);
    expect(await h.table.get(codeKey('register', email))).toBeUndefined();
  });

  it('answers 409 at register/code for an e-mail in use, case-insensitively, or equal to a username', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    expect((await h.call('POST', '/auth/register/code', { email: user.email.toUpperCase() })).status).toBe(
      409,
    );
    // An account whose username looks like an e-mail (legacy or bootstrap data) holds that address too.
    const legacy = `${unique('legacy')}@example.test`;
    await h.accounts.repository.create({
      username: legacy,
      email: null,
      emailVerified: false,
      role: 'user',
      passwordHash: await hashPassword('whatever-123'),
    });
    const taken = await h.call('POST', '/auth/register/code', { email: legacy.toUpperCase() });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toMatch(/^email:/);
    expect(h.mail.to(legacy)).toHaveLength(0);
  });

  it('answers 409 for a taken username or e-mail at register, without spending the code', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const email = `${unique('fresh')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const code = h.mail.codeFor(email);
    const body = { username: user.username.toUpperCase(), email, code, password: 'pw-12345678' };
    const taken = await h.call('POST', '/auth/register', body);
    expect(taken.status).toBe(409);
    expect(taken.body.message).toMatch(/^username:/);
    const ok = await h.call('POST', '/auth/register', { ...body, username: unique('fresh_') });
    expect(ok.status).toBe(201);
  });

  it('refuses a wrong code with 400 and gives at most 5 attempts (the 6th fails with the right code)', async () => {
    const h = authHarness();
    const email = `${unique('att')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const code = h.mail.codeFor(email);
    const wrong = code === '000000' ? '111111' : '000000';
    const body = { username: unique('att_'), email, password: 'pw-12345678' };
    for (let i = 0; i < 5; i++) {
      const res = await h.call('POST', '/auth/register', { ...body, code: wrong });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('code: is invalid or expired');
    }
    const sixth = await h.call('POST', '/auth/register', { ...body, code });
    expect(sixth.status).toBe(400);
    expect(await h.accounts.repository.ownerOf(body.username)).toBeUndefined();
  });

  it('counts concurrent wrong attempts exactly: after 10 at once the right code is refused', async () => {
    const h = authHarness();
    const email = `${unique('catt')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const code = h.mail.codeFor(email);
    const wrong = code === '000000' ? '111111' : '000000';
    const body = { username: unique('catt_'), email, password: 'pw-12345678' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', '/auth/register', { ...body, code: wrong })),
    );
    expect(results.every((res) => res.status === 400)).toBe(true);
    expect((await h.call('POST', '/auth/register', { ...body, code })).status).toBe(400);
    const item = await h.table.get(codeKey('register', email));
    expect(item?.attempts).toBe(5);
  });

  it('expires a code after 10 minutes and keeps only the latest code live', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const email = `${unique('exp')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const first = h.mail.codeFor(email);
    clock.advance(61_000);
    await h.call('POST', '/auth/register/code', { email });
    const second = h.mail.codeFor(email);
    const body = { username: unique('exp_'), email, password: 'pw-12345678' };
    if (first !== second)
      expect((await h.call('POST', '/auth/register', { ...body, code: first })).status).toBe(400);
    clock.advance(10 * 60_000 + 1000);
    expect((await h.call('POST', '/auth/register', { ...body, code: second })).status).toBe(400);
  });

  it('stores codes only as a peppered digest', async () => {
    const h = authHarness();
    const email = `${unique('hash')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const code = h.mail.codeFor(email);
    const item = await h.table.get(codeKey('register', email));
    expect(JSON.stringify(item)).not.toContain(code);
    expect(item).toMatchObject({ attempts: 0, target: email });
  });

  it('lets exactly one of 20 concurrent registrations of one username win, with no orphan items', async () => {
    const h = authHarness();
    const username = unique('race_');
    const emails = Array.from({ length: 20 }, (_, i) => `${username}-${i}@example.test`);
    await Promise.all(emails.map((email) => h.call('POST', '/auth/register/code', { email })));
    const codes = emails.map((email) => h.mail.codeFor(email));
    const results = await Promise.all(
      emails.map((email, i) =>
        h.call('POST', '/auth/register', { username, email, code: codes[i], password: 'pw-12345678' }),
      ),
    );
    const winners = results.filter((res) => res.status === 201);
    expect(winners).toHaveLength(1);
    expect(results.filter((res) => res.status === 409)).toHaveLength(19);
    const winnerEmail = winners[0]!.body.data.email;
    for (const email of emails) {
      const claim = await h.table.get(identifierKey(email));
      expect(claim !== undefined).toBe(email === winnerEmail);
      // The losers' codes were not consumed (their transaction rolled back).
      expect((await h.table.get(codeKey('register', email))) !== undefined).toBe(email !== winnerEmail);
    }
  });

  it('lets exactly one win when 10 register an e-mail while 10 take it as a username', async () => {
    const h = authHarness();
    const contested = `${unique('both')}@example.test`;
    await h.call('POST', '/auth/register/code', { email: contested });
    const code = h.mail.codeFor(contested);
    const hash = await hashPassword('pw-12345678');
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) =>
        h
          .call('POST', '/auth/register', {
            username: `${unique('b')}_${i}`,
            email: contested,
            code,
            password: 'pw-12345678',
          })
          .then((res) => (res.status === 201 ? res : Promise.reject(res))),
      ),
      ...Array.from({ length: 10 }, () =>
        h.accounts.repository.create({
          username: contested,
          email: null,
          emailVerified: false,
          role: 'user',
          passwordHash: hash,
        }),
      ),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
  });

  it('uses a code once however many registrations race with it', async () => {
    const h = authHarness();
    const email = `${unique('once')}@example.test`;
    await h.call('POST', '/auth/register/code', { email });
    const code = h.mail.codeFor(email);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        h.call('POST', '/auth/register', {
          username: `${unique('once_')}${i}`,
          email,
          code,
          password: 'pw-12345678',
        }),
      ),
    );
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
  });

  it('throttles code sends per address: 10 at once admit 2, then 1 a minute, 10 a day', async () => {
    const clock = movableClock(Date.UTC(2031, 4, 6, 0, 0, 30));
    const h = authHarness({ clock });
    const email = `${unique('thr')}@example.test`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', '/auth/register/code', { email })),
    );
    expect(results.filter((res) => res.status === 200)).toHaveLength(2);
    const refused = results.find((res) => res.status === 429)!;
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.data).toEqual({ retry_after: Number(refused.headers['retry-after']) });
    expect(h.mail.to(email)).toHaveLength(2);
    // Another address is not affected.
    expect((await h.call('POST', '/auth/register/code', { email: `x${email}` })).status).toBe(200);
    for (let i = 0; i < 8; i++) {
      clock.advance(60_000);
      expect((await h.call('POST', '/auth/register/code', { email })).status).toBe(200);
    }
    clock.advance(60_000);
    const capped = await h.call('POST', '/auth/register/code', { email });
    expect(capped.status).toBe(429);
    // Until the next UTC day.
    expect(Number(capped.headers['retry-after'])).toBeGreaterThan(20 * 3600);
    clock.set(Date.UTC(2031, 4, 7, 0, 0, 1));
    expect((await h.call('POST', '/auth/register/code', { email })).status).toBe(200);
  });

  it('limits each source IP on the unauthenticated endpoints, 429 with Retry-After', async () => {
    const h = authHarness({ limits: { ipPerMinute: 3 } });
    const ip = '198.51.100.23';
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        h.call('POST', '/auth/login', { username: 'nobody', password: 'x' }, { ip }),
      ),
    );
    expect(results.filter((res) => res.status === 401)).toHaveLength(3);
    expect(results.filter((res) => res.status === 429)).toHaveLength(5);
    expect(results.find((res) => res.status === 429)!.headers['retry-after']).toBeDefined();
    const other = await h.call(
      'POST',
      '/auth/register/code',
      { email: `${unique('ip')}@example.test` },
      { ip: '198.51.100.24' },
    );
    expect(other.status).toBe(200);
    const same = await h.call(
      'POST',
      '/auth/register/code',
      { email: `${unique('ip')}@example.test` },
      { ip },
    );
    expect(same.status).toBe(429);
  });
});
