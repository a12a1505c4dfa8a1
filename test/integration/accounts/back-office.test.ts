// The back office's account endpoints (docs/DESIGN.md 10): creating an administrator needs the acting
// administrator's password; search and pages; disabling an account stops its sessions and API tokens at
// once; an administrator's TOTP reset. And the hole that made re-authentication necessary: an
// administrator's unverified address cannot be replaced with a stolen session alone.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { API_PREFIX } from '#lib/http/routes.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;
const ADMIN_PASSWORD = 'admin-password-1';
const ACCOUNTS = `${API_PREFIX}/admin/accounts`;

async function adminOf(h: Harness) {
  const account = await h.accounts.repository.create({
    username: `boss_${randomBytes(4).toString('hex')}`,
    email: `boss_${randomBytes(4).toString('hex')}@example.test`,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(ADMIN_PASSWORD),
  });
  const login = await h.call('POST', '/admin/auth/login', {
    username: account.username,
    password: ADMIN_PASSWORD,
  });
  return { account, token: login.body.data.token as string };
}

describe('creating an administrator', () => {
  it("needs the acting administrator's current password: missing or wrong is 400 naming current_password", async () => {
    const h = authHarness();
    const admin = await adminOf(h);
    const body = {
      username: `ops_${randomBytes(3).toString('hex')}`,
      email: 'ops@example.test',
      password: 'ops password 1',
    };
    const missing = await h.call('POST', ACCOUNTS, body, { token: admin.token });
    const wrong = await h.call(
      'POST',
      ACCOUNTS,
      { ...body, current_password: 'not-mine-1' },
      { token: admin.token },
    );
    for (const answer of [missing, wrong]) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^current_password:/);
    }
    expect(await h.accounts.repository.ownerOf(body.username)).toBeUndefined();
    const created = await h.call(
      'POST',
      ACCOUNTS,
      { ...body, current_password: ADMIN_PASSWORD },
      { token: admin.token },
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ role: 'admin', email_verified: false });
  });

  it('cannot have its unverified address replaced with a stolen session alone', async () => {
    // Prepare: an administrator as bootstrap or the back office makes it (address unverified).
    const h = authHarness();
    const admin = await adminOf(h);
    const attacker = `attacker${Date.now()}@example.test`;
    await h.call('POST', '/auth/email/code', { email: attacker }, { token: admin.token });
    const code = h.mail.codeFor(attacker);
    // Act
    const noPassword = await h.call(
      'POST',
      '/auth/email/verify',
      { email: attacker, code },
      { token: admin.token },
    );
    const guessed = await h.call(
      'POST',
      '/auth/email/verify',
      { email: attacker, code, password: 'guess-one-1' },
      { token: admin.token },
    );
    // Assess
    expect(noPassword.status).toBe(400);
    expect(noPassword.body.message).toMatch(/^password:/);
    expect(guessed.status).toBe(400);
    expect(guessed.body.message).toBe('password: is incorrect');
    expect((await h.accounts.repository.get(admin.account.id))?.email).toBe(admin.account.email);
  });
});

describe('searching accounts', () => {
  it('finds accounts by username or e-mail prefix in any case, once each, in cursor pages', async () => {
    // Prepare: five accounts under one fresh prefix; one matches by username and e-mail alike.
    const h = authHarness();
    const admin = await adminOf(h);
    const tag = `q${randomBytes(3).toString('hex')}`;
    const users = [];
    for (let n = 0; n < 4; n++) users.push(await h.registerUser({ username: `${tag}_u${n}` }));
    const byMail = await h.registerUser({
      username: `zz${randomBytes(3).toString('hex')}`,
      email: `${tag}.mail@example.test`,
    });
    // Act
    const pages: Array<Record<string, unknown>[]> = [];
    let cursor: string | null = null;
    do {
      const query: string = `q=${tag.toUpperCase()}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await h.call('GET', `${ACCOUNTS}?${query}`, undefined, { token: admin.token });
      expect(page.status).toBe(200);
      pages.push(page.body.data.items);
      cursor = page.body.data.next_cursor;
    } while (cursor);
    // Assess
    const listed = pages.flat();
    expect(listed.map((item) => item.id).sort()).toEqual([...users.map((user) => user.id), byMail.id].sort());
    expect(pages.every((page) => page.length <= 2)).toBe(true);
    // In the order of the matching value: '.' sorts before '_'.
    expect(listed[0]!.id).toBe(byMail.id);
    expect(listed[1]).toEqual({
      id: users[0]!.id,
      username: `${tag}_u0`,
      email: users[0]!.email,
      email_verified: true,
      role: 'user',
      totp_enabled: false,
      created_at: expect.stringMatching(/\+00:00$/),
      status: 'active',
      // From the usage repository (docs/DESIGN.md 11): nothing stored yet, the default quota in force.
      usage: { used_bytes: 0, file_count: 0, quota_bytes: 1024 ** 3, bandwidth_bytes_used: 0 },
    });
    const byEmail = await h.call('GET', `${ACCOUNTS}?q=${tag}.MAIL`, undefined, { token: admin.token });
    expect(byEmail.body.data.items.map((item: { id: string }) => item.id)).toEqual([byMail.id]);
    const both = await h.call('GET', `${ACCOUNTS}?q=${tag}_u1`, undefined, { token: admin.token });
    expect(both.body.data.items).toHaveLength(1);
    expect(JSON.stringify(pages)).not.toMatch(/argon2|password|secret|digest/);
  });

  it('lists every account by username without a query, and refuses bad queries and forged cursors', async () => {
    const h = authHarness();
    const admin = await adminOf(h);
    const all = await h.call('GET', `${ACCOUNTS}?limit=100`, undefined, { token: admin.token });
    expect(all.status).toBe(200);
    const names = all.body.data.items.map((item: { username: string }) => item.username.toLowerCase());
    expect(names).toEqual([...names].sort());
    expect(names).toContain(admin.account.username.toLowerCase());
    for (const [query, field] of [
      ['limit=0', 'query.limit'],
      ['limit=101', 'query.limit'],
      [`q=${'a'.repeat(255)}`, 'query.q'],
      [
        `cursor=${Buffer.from(JSON.stringify({ pk: 'account#x', sk: 'account' })).toString('base64url')}`,
        'query.cursor',
      ],
      ['cursor=%%%', 'query.cursor'],
    ]) {
      const answer = await h.call('GET', `${ACCOUNTS}?${query}`, undefined, { token: admin.token });
      expect(answer.status, query).toBe(400);
      expect(answer.body.message.startsWith(`${field}:`), answer.body.message).toBe(true);
    }
  });

  it('lists accounts created before the search index once they log in', async () => {
    const h = authHarness();
    const admin = await adminOf(h);
    const user = await h.registerUser();
    for (const value of [user.username, user.email]) {
      await h.table.update(identifierKey(value), { UpdateExpression: 'REMOVE gsi2pk, gsi2sk' });
    }
    await h.table.update(accountKey(user.id), { UpdateExpression: 'REMOVE ident_indexed' });
    const search = () => h.call('GET', `${ACCOUNTS}?q=${user.username}`, undefined, { token: admin.token });
    expect((await search()).body.data.items).toEqual([]);
    await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect((await search()).body.data.items.map((item: { id: string }) => item.id)).toEqual([user.id]);
  });
});

describe('disabling an account', () => {
  it('stops its sessions and API tokens on their next request, and answers its login 403 only with the right password', async () => {
    // Prepare
    const h = authHarness();
    const admin = await adminOf(h);
    const user = await h.registerUser();
    const apiToken = (
      await h.call('POST', '/api/v1/tokens', { name: 'x' }, { token: user.token, group: 'files' })
    ).body.data.token as string;
    expect(
      (await h.call('GET', '/api/v1/files', undefined, { token: apiToken, group: 'files' })).status,
    ).toBe(200);
    // Act
    const disabled = await h.call(
      'PATCH',
      `${ACCOUNTS}/${user.id}`,
      { status: 'disabled' },
      { token: admin.token },
    );
    // Assess
    expect(disabled.status).toBe(200);
    expect(disabled.body.data).toMatchObject({ id: user.id, status: 'disabled' });
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
    expect(
      (await h.call('GET', '/api/v1/files', undefined, { token: apiToken, group: 'files' })).status,
    ).toBe(401);
    const right = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(right.status).toBe(403);
    expect(right.body.message).toBe('account disabled');
    const wrong = await h.call('POST', '/auth/login', {
      username: user.username,
      password: 'wrong-password-1',
    });
    const unknown = await h.call('POST', '/auth/login', {
      username: 'no_such_person',
      password: 'wrong-password-1',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.raw).toBe(unknown.raw);
    // Enabled again: login works, the API token works again, the old session stays ended.
    const enabled = await h.call(
      'PATCH',
      `${ACCOUNTS}/${user.id}`,
      { status: 'active' },
      { token: admin.token },
    );
    expect(enabled.body.data.status).toBe('active');
    expect(
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).status,
    ).toBe(200);
    expect(
      (await h.call('GET', '/api/v1/files', undefined, { token: apiToken, group: 'files' })).status,
    ).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
  });

  it('refuses disabling oneself, unknown ids and bad statuses', async () => {
    const h = authHarness();
    const admin = await adminOf(h);
    const self = await h.call(
      'PATCH',
      `${ACCOUNTS}/${admin.account.id}`,
      { status: 'disabled' },
      { token: admin.token },
    );
    expect(self.status).toBe(400);
    expect(self.body.message).toMatch(/^status:/);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id', 'x'.repeat(300)]) {
      expect(
        (await h.call('PATCH', `${ACCOUNTS}/${id}`, { status: 'active' }, { token: admin.token })).status,
      ).toBe(404);
    }
    for (const body of [{}, { status: 'gone' }, { status: true }]) {
      const answer = await h.call('PATCH', `${ACCOUNTS}/${admin.account.id}`, body, { token: admin.token });
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^status:/);
    }
  });
});

describe('an administrator resetting TOTP', () => {
  it('turns it off, removes the recovery codes, ends the sessions and mails the owner', async () => {
    // Prepare
    const clock = movableClock();
    const h = authHarness({ clock });
    const admin = await adminOf(h);
    const user = await h.registerUser();
    await h.enableTotp(user, clock);
    // Act
    const reset = await h.call(
      'POST',
      `${ACCOUNTS}/${user.id}/totp/reset`,
      {},
      { token: admin.token, ip: '192.0.2.200' },
    );
    // Assess
    expect(reset.status).toBe(200);
    expect(reset.body.data).toMatchObject({ id: user.id, totp_enabled: false });
    const stored = await h.table.get(accountKey(user.id));
    expect(stored?.totp_secret_enc).toBeUndefined();
    expect(stored?.recovery_code_digests).toBeUndefined();
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.body.data.token).toBeTruthy();
    const notice = h.mail.to(user.email).find((mail) => /reset by an administrator/.test(mail.subject))!;
    expect(notice.text).toContain('192.0.2.200');
    const events = await h.call('GET', '/auth/security/events', undefined, { token: login.body.data.token });
    expect(events.body.data.items.map((event: { type: string }) => event.type)).toContain('totp_reset');
    expect(
      (await h.call('POST', `${ACCOUNTS}/${user.id}/totp/reset`, {}, { token: admin.token })).status,
    ).toBe(409);
    expect(
      (
        await h.call(
          'POST',
          `${ACCOUNTS}/00000000-0000-4000-8000-000000000000/totp/reset`,
          {},
          { token: admin.token },
        )
      ).status,
    ).toBe(404);
  });
});

describe('who may call the back office', () => {
  it('answers a user session 403 and no session 401 on every back-office route', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const calls: Array<[string, string, unknown]> = [
      ['GET', ACCOUNTS, undefined],
      [
        'POST',
        ACCOUNTS,
        { username: 'sneaky', email: 's@x.test', password: 'long enough', current_password: 'x' },
      ],
      ['PATCH', `${ACCOUNTS}/${user.id}`, { status: 'disabled' }],
      ['POST', `${ACCOUNTS}/${user.id}/totp/reset`, {}],
    ];
    for (const [method, path, body] of calls) {
      expect((await h.call(method, path, body, { token: user.token })).status, `${method} ${path}`).toBe(403);
      expect((await h.call(method, path, body)).status, `${method} ${path}`).toBe(401);
    }
    expect((await h.accounts.repository.get(user.id))?.status).toBe('active');
  });
});
