// The session list, ending sessions, what password change and reset end (sessions; tokens only on reset),
// the notices they send and the security events they record (docs/DESIGN.md 10, docs/ACCOUNTS.md).
import { beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '#lib/accounts/sessions.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;
type User = Awaited<ReturnType<Harness['registerUser']>>;

async function loginFrom(h: Harness, user: User, ip: string, userAgent: string) {
  const login = await h.call(
    'POST',
    '/auth/login',
    { username: user.username, password: user.password },
    { ip, headers: { 'user-agent': userAgent } },
  );
  expect(login.status).toBe(200);
  return login.body.data.token as string;
}

const sessionId = async (h: Harness, token: string) => (await h.signer.verify(token, 'session')).jti;

async function createApiToken(h: Harness, token: string) {
  const created = await h.call('POST', '/api/v1/tokens', { name: 'uploader' }, { token, group: 'files' });
  expect(created.status).toBe(201);
  return created.body.data.token as string;
}
const filesWith = (h: Harness, token: string) =>
  h.call('GET', '/api/v1/files', undefined, { token, group: 'files' });

describe('the session list', () => {
  it('lists live sessions newest first, marking the current one, with address and user agent', async () => {
    // Prepare
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    clock.advance(1000);
    const phone = await loginFrom(h, user, '198.51.100.1', 'Phone/1.0');
    clock.advance(1000);
    const laptop = await loginFrom(h, user, '2001:db8::5', 'Laptop/2.0');
    // Act
    const listed = await h.call('GET', '/auth/sessions', undefined, { token: laptop });
    // Assess
    expect(listed.status).toBe(200);
    const sessions = listed.body.data as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(3);
    expect(sessions[0]).toEqual({
      id: await sessionId(h, laptop),
      current: true,
      created_at: expect.stringMatching(/\+00:00$/),
      expires_at: expect.stringMatching(/\+00:00$/),
      ip: '2001:db8::5',
      user_agent: 'Laptop/2.0',
    });
    expect(sessions[1]).toMatchObject({ id: await sessionId(h, phone), current: false, ip: '198.51.100.1' });
    expect(listed.raw).not.toContain(phone);
    // Sessions of an older epoch (a password change) are not listed.
    await h.call(
      'POST',
      '/auth/password',
      { current_password: user.password, new_password: 'brand-new-pw' },
      { token: laptop },
    );
    const fresh = (await h.call('POST', '/auth/login', { username: user.username, password: 'brand-new-pw' }))
      .body.data.token;
    const after = await h.call('GET', '/api/v1/auth/sessions', undefined, { token: fresh });
    expect(after.body.data.map((session: { current: boolean }) => session.current)).toContain(true);
    expect(after.body.data.map((session: { id: string }) => session.id)).not.toContain(
      await sessionId(h, phone),
    );
  });

  it("ends one session by id; another account's session id, or none, is 404", async () => {
    const h = authHarness();
    const [ann, bob] = [await h.registerUser(), await h.registerUser()];
    const annOther = await loginFrom(h, ann, '198.51.100.2', 'ua');
    const bobId = await sessionId(h, bob.token);
    expect((await h.call('DELETE', `/auth/sessions/${bobId}`, undefined, { token: ann.token })).status).toBe(
      404,
    );
    expect((await h.call('GET', '/auth/me', undefined, { token: bob.token })).status).toBe(200);
    for (const id of ['nope', 'x'.repeat(500), '..%2F..']) {
      expect((await h.call('DELETE', `/auth/sessions/${id}`, undefined, { token: ann.token })).status).toBe(
        404,
      );
    }
    const ended = await h.call('DELETE', `/auth/sessions/${await sessionId(h, annOther)}`, undefined, {
      token: ann.token,
    });
    expect(ended.status).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: annOther })).status).toBe(401);
    expect((await h.call('GET', '/auth/me', undefined, { token: ann.token })).status).toBe(200);
  });

  it('lets exactly one of 50 concurrent revocations of one session succeed, and the session is gone', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    const victim = await loginFrom(h, user, '198.51.100.3', 'ua');
    const id = await sessionId(h, victim);
    // Act
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        h.call('DELETE', `/auth/sessions/${id}`, undefined, { token: user.token }),
      ),
    );
    // Assess
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 404)).toHaveLength(49);
    expect(await h.table.get(sessionKey(user.id, id))).toBeUndefined();
    expect((await h.call('GET', '/auth/me', undefined, { token: victim })).status).toBe(401);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: user.token });
    expect(
      events.body.data.items.filter((event: { type: string }) => event.type === 'session_revoked'),
    ).toHaveLength(1);
  });

  it('ends every other session and keeps the current one', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const others = [
      await loginFrom(h, user, '198.51.100.4', 'a'),
      await loginFrom(h, user, '198.51.100.5', 'b'),
    ];
    const answer = await h.call('POST', '/auth/sessions/revoke-others', {}, { token: user.token });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ revoked: 2 });
    for (const token of others)
      expect((await h.call('GET', '/auth/me', undefined, { token })).status).toBe(401);
    const listed = await h.call('GET', '/auth/sessions', undefined, { token: user.token });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].current).toBe(true);
  });
});

describe('password change and reset', () => {
  it('change: every other session ends, API tokens keep working, and the owner is told', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const apiToken = await createApiToken(h, user.token);
    const other = await loginFrom(h, user, '198.51.100.6', 'ua');
    const changed = await h.call(
      'POST',
      '/auth/password',
      { current_password: user.password, new_password: 'brand-new-pw' },
      { token: user.token, ip: '203.0.113.50' },
    );
    expect(changed.status).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: other })).status).toBe(401);
    expect((await filesWith(h, apiToken)).status).toBe(200);
    const notice = h.mail.to(user.email).find((mail) => mail.subject === 'Your password was changed')!;
    expect(notice.text).toContain('203.0.113.50');
    expect(notice.text).toMatch(/API tokens keep working/);
  });

  it('reset: every session ends and every API token is revoked, and the owner is told', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    const apiTokens = [await createApiToken(h, user.token), await createApiToken(h, user.token)];
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const code = h.mail.codeFor(user.email);
    // Act
    const reset = await h.call(
      'POST',
      '/auth/password/reset',
      { email: user.email, code, new_password: 'reset-pw-123' },
      { ip: '203.0.113.51' },
    );
    // Assess
    expect(reset.status).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
    for (const token of apiTokens) expect((await filesWith(h, token)).status).toBe(401);
    const session = (
      await h.call('POST', '/auth/login', { username: user.username, password: 'reset-pw-123' })
    ).body.data.token;
    const listed = await h.call('GET', '/api/v1/tokens', undefined, { token: session, group: 'files' });
    expect(listed.body.data).toEqual([]);
    // A token made after the reset works.
    expect((await filesWith(h, await createApiToken(h, session))).status).toBe(200);
    const notice = h.mail.to(user.email).find((mail) => mail.subject === 'Your password was reset')!;
    expect(notice.text).toContain('203.0.113.51');
    expect(notice.text).toMatch(/every API token was revoked/);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: session });
    expect(events.body.data.items.map((event: { type: string }) => event.type)).toContain('password_reset');
  });
});

describe('security events', () => {
  it('record each kind of change with time, address and user agent, newest first, in cursor pages', async () => {
    // Prepare: a login failure, logins, a token made and revoked, a session ended, a password change.
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const step = () => clock.advance(1000);
    step();
    await h.call(
      'POST',
      '/auth/login',
      { username: user.username, password: 'wrong-password' },
      { ip: '192.0.2.1' },
    );
    step();
    const token = await loginFrom(h, user, '192.0.2.2', 'Browser/9');
    step();
    const created = await h.call('POST', '/api/v1/tokens', { name: 'x' }, { token, group: 'files' });
    step();
    await h.call('DELETE', `/api/v1/tokens/${created.body.data.id}`, undefined, { token, group: 'files' });
    step();
    await h.call('DELETE', `/auth/sessions/${await sessionId(h, user.token)}`, undefined, { token });
    step();
    const changed = await h.call(
      'POST',
      '/auth/password',
      { current_password: user.password, new_password: 'brand-new-pw' },
      { token, ip: '192.0.2.3', headers: { 'user-agent': 'Browser/10' } },
    );
    const session = changed.body.data.token as string;
    // Act: pages of 3.
    const first = await h.call('GET', '/auth/security/events?limit=3', undefined, { token: session });
    const second = await h.call(
      'GET',
      `/auth/security/events?limit=3&cursor=${first.body.data.next_cursor}`,
      undefined,
      { token: session },
    );
    const rest = await h.call(
      'GET',
      `/auth/security/events?limit=10&cursor=${second.body.data.next_cursor}`,
      undefined,
      { token: session },
    );
    // Assess
    const items = [...first.body.data.items, ...second.body.data.items, ...rest.body.data.items];
    expect(items.map((event: { type: string }) => event.type)).toEqual([
      'password_changed',
      'session_revoked',
      'token_revoked',
      'token_created',
      'login',
      'login_failed',
      'login',
    ]);
    expect(items[0]).toEqual({
      type: 'password_changed',
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
      ip: '192.0.2.3',
      user_agent: 'Browser/10',
    });
    expect(items[5]).toMatchObject({ type: 'login_failed', ip: '192.0.2.1' });
    expect(rest.body.data.next_cursor).toBeNull();
  });

  it('are kept 90 days (the TTL attribute) and never show another account', async () => {
    const h = authHarness();
    const [ann, bob] = [await h.registerUser(), await h.registerUser()];
    const { items } = await h.table.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
      ExpressionAttributeValues: { ':pk': `account#${ann.id}`, ':event': 'event#' },
    });
    expect(items.length).toBeGreaterThan(0);
    const ttlDays = ((items[0]!.expires_at as number) - Date.now() / 1000) / 86_400;
    expect(ttlDays).toBeGreaterThan(89.9);
    expect(ttlDays).toBeLessThan(90.1);
    // A cursor naming another account's partition is refused, not followed.
    const forged = Buffer.from(JSON.stringify({ pk: `account#${bob.id}`, sk: 'event#9' })).toString(
      'base64url',
    );
    const refused = await h.call('GET', `/auth/security/events?cursor=${forged}`, undefined, {
      token: ann.token,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^query\.cursor:/);
    expect(
      (await h.call('GET', '/auth/security/events?limit=0', undefined, { token: ann.token })).status,
    ).toBe(400);
    expect(
      (await h.call('GET', '/auth/security/events?limit=abc', undefined, { token: ann.token })).body.message,
    ).toMatch(/^query\.limit:/);
  });
});

describe('e-mail changes', () => {
  it('tell the old verified address and record the change', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const target = `moved${Date.now()}@example.test`;
    await h.call('POST', '/auth/email/code', { email: target }, { token: user.token });
    const bound = await h.call(
      'POST',
      '/auth/email/verify',
      { email: target, code: h.mail.codeFor(target), password: user.password },
      { token: user.token, ip: '192.0.2.99' },
    );
    expect(bound.status).toBe(200);
    const notice = h.mail
      .to(user.email)
      .find((mail) => mail.subject === 'Your account e-mail address was changed')!;
    expect(notice.text).toContain('192.0.2.99');
    expect(notice.text).not.toContain(target);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: user.token });
    expect(events.body.data.items[0]).toMatchObject({ type: 'email_changed', ip: '192.0.2.99' });
  });
});
