// Passkeys (docs/DESIGN.md 18) against DynamoDB Local, with a software authenticator (ES256, `none`
// attestation): registration, both login forms at both doors, the login challenge's passkey answer, and
// every refusal the one 401.
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { addPasskey, passkeyLogin, stranger } from '#test/support/passkeys.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { SoftAuthenticator } from '#test/support/webauthn.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;

async function adminAccount(h: Harness) {
  const password = 'admin-password-1';
  const admin = await h.accounts.repository.create({
    username: `adm_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
    email: null,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(password),
  });
  const { token } = await h.sessions.issue(admin);
  return { ...admin, token, password };
}

const REFUSAL = 'Passkey not accepted';

describe('adding passkeys', () => {
  it('asks for the password, then adds the passkey: listed, counted, an event and a notice mail', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const device = new SoftAuthenticator();

    const wrong = await h.call(
      'POST',
      '/auth/passkeys/register/options',
      { password: 'not-the-password' },
      { token: user.token },
    );
    const missing = await h.call('POST', '/auth/passkeys/register/options', {}, { token: user.token });
    const anonymous = await h.call('POST', '/auth/passkeys/register/options', { password: user.password });
    expect([wrong.status, missing.status, anonymous.status]).toEqual([400, 400, 401]);
    expect(wrong.body.message).toMatch(/password/);

    const options = await h.call(
      'POST',
      '/auth/passkeys/register/options',
      { password: user.password },
      { token: user.token },
    );
    expect(options.body.data).toMatchObject({
      rp: { id: 'localhost' },
      user: { name: user.username },
      attestation: 'none',
    });
    const created = await h.call(
      'POST',
      '/api/v1/auth/passkeys/register/verify',
      { response: device.register(options.body.data), name: 'Laptop' },
      { token: user.token },
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      id: device.credentials[0]!.id.toString('base64url'),
      name: 'Laptop',
      created_at: expect.stringMatching(/\+00:00$/),
      last_used_at: null,
    });

    const listed = await h.call('GET', '/auth/passkeys', undefined, { token: user.token });
    expect(listed.body.data).toEqual([created.body.data]);
    const security = await h.call('GET', '/auth/security', undefined, { token: user.token });
    expect(security.body.data.passkeys).toBe(1);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: user.token });
    expect(events.body.data.items.map((event: { type: string }) => event.type)).toContain('passkey_added');
    expect(
      h.mail.sent.some((mail) => mail.to === user.email && /passkey was added/i.test(mail.subject)),
    ).toBe(true);
  });

  it('takes each registration challenge once, and refuses another account, another origin or an old challenge', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const [owner, other] = [await h.registerUser(), await h.registerUser()];
    const device = new SoftAuthenticator();
    const optionsFor = async (user: { token: string; password: string }) =>
      (
        await h.call(
          'POST',
          '/auth/passkeys/register/options',
          { password: user.password },
          { token: user.token },
        )
      ).body.data;

    const options = await optionsFor(owner);
    const response = device.register(options);
    // Another account's session cannot use the owner's challenge.
    const foreign = await h.call(
      'POST',
      '/auth/passkeys/register/verify',
      { response },
      { token: other.token },
    );
    expect(foreign.status).toBe(400);
    const wrongOrigin = await h.call(
      'POST',
      '/auth/passkeys/register/verify',
      { response: device.register(await optionsFor(owner), { origin: 'https://evil.example' }) },
      { token: owner.token },
    );
    expect(wrongOrigin.status).toBe(400);
    const stale = await optionsFor(owner);
    clock.advance(301_000);
    const expired = await h.call(
      'POST',
      '/auth/passkeys/register/verify',
      { response: device.register(stale) },
      { token: owner.token },
    );
    expect(expired.status).toBe(400);

    const fresh = device.register(await optionsFor(owner));
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        h.call('POST', '/auth/passkeys/register/verify', { response: fresh }, { token: owner.token }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect((await h.call('GET', '/auth/passkeys', undefined, { token: owner.token })).body.data).toHaveLength(
      1,
    );
  });
});

describe('passwordless login', () => {
  it('logs in by username and by a discoverable credential: a session, no TOTP challenge, a login event with its method', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    await h.enableTotp(user);
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);

    const byName = await passkeyLogin(h, device, { username: user.username });
    expect(byName.status, byName.raw).toBe(200);
    expect(byName.body.data).toMatchObject({ token_type: 'Bearer', user: { id: user.id } });
    expect(byName.body.data.totp_required).toBeUndefined();
    const discoverable = await passkeyLogin(h, device);
    expect(discoverable.status).toBe(200);
    expect((await h.call('GET', '/auth/me', undefined, { token: discoverable.body.data.token })).status).toBe(
      200,
    );

    const events = await h.call('GET', '/auth/security/events', undefined, { token: byName.body.data.token });
    const logins = events.body.data.items.filter((event: { type: string }) => event.type === 'login');
    expect(logins.slice(0, 2).map((event: { method?: string }) => event.method)).toEqual([
      'passkey',
      'passkey',
    ]);
    const [listed] = (await h.call('GET', '/auth/passkeys', undefined, { token: user.token })).body.data;
    expect(listed.last_used_at).toMatch(/\+00:00$/);
  });

  it('answers every refusal with one 401: another account, wrong origin, wrong RP ID, unknown, replayed, expired, counter backwards', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const [owner, other] = [await h.registerUser(), await h.registerUser()];
    const device = new SoftAuthenticator();
    const otherDevice = new SoftAuthenticator();
    await addPasskey(h, owner, device);
    await addPasskey(h, other, otherDevice);

    const refusals = [];
    // The owner's options answered with another account's credential.
    const ownersOptions = await h.call('POST', '/auth/passkeys/login/options', { username: owner.username });
    refusals.push(
      await h.call('POST', '/auth/passkeys/login/verify', {
        response: otherDevice.authenticate({ ...ownersOptions.body.data, allowCredentials: [] }),
      }),
    );
    refusals.push(await passkeyLogin(h, device, { bend: { origin: 'https://evil.example' } }));
    refusals.push(await passkeyLogin(h, device, { bend: { rpId: 'evil.example' } }));
    refusals.push(await passkeyLogin(h, stranger()));
    // Replayed: a good assertion, sent again.
    const options = await h.call('POST', '/auth/passkeys/login/options', {});
    const good = device.authenticate(options.body.data);
    expect((await h.call('POST', '/auth/passkeys/login/verify', { response: good })).status).toBe(200);
    refusals.push(await h.call('POST', '/auth/passkeys/login/verify', { response: good }));
    // Expired: options older than five minutes.
    const stale = await h.call('POST', '/auth/passkeys/login/options', {});
    clock.advance(301_000);
    refusals.push(
      await h.call('POST', '/auth/passkeys/login/verify', { response: device.authenticate(stale.body.data) }),
    );
    // The counter went backwards (a cloned authenticator).
    expect((await passkeyLogin(h, device, { bend: { counter: 50 } })).status).toBe(200);
    refusals.push(await passkeyLogin(h, device, { bend: { counter: 20 } }));
    // The user door's challenge at the administrators' door.
    const userDoor = await h.call('POST', '/auth/passkeys/login/options', {});
    refusals.push(
      await h.call('POST', '/admin/auth/passkeys/login/verify', {
        response: device.authenticate(userDoor.body.data),
      }),
    );

    for (const refusal of refusals) {
      expect(refusal.status, refusal.raw).toBe(401);
      expect(refusal.body.message).toBe(REFUSAL);
      expect(refusal.raw).toBe(refusals[0]!.raw);
    }
    // The genuine authenticator, its counter past the highest seen, still signs in.
    expect((await passkeyLogin(h, device, { bend: { counter: 51 } })).status).toBe(200);
  });

  it('signs in once with one assertion sent concurrently', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);
    const options = await h.call('POST', '/auth/passkeys/login/options', { username: user.username });
    const response = device.authenticate(options.body.data);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h.call('POST', '/auth/passkeys/login/verify', { response })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(7);
  });

  it('accepts one counter value once: four assertions signing the same counter, sent together, sign in once', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);
    // A cloned authenticator: two fresh challenges, both signed with counter 7.
    const responses = [];
    for (let n = 0; n < 4; n++) {
      const options = await h.call('POST', '/auth/passkeys/login/options', { username: user.username });
      responses.push(device.authenticate(options.body.data, { counter: 7 }));
    }
    const answers = await Promise.all(
      responses.map((response) => h.call('POST', '/auth/passkeys/login/verify', { response })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it("accepts only administrators at the administrators' door, and only users at the users'", async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const admin = await adminAccount(h);
    const userDevice = new SoftAuthenticator();
    const adminDevice = new SoftAuthenticator();
    await addPasskey(h, user, userDevice);
    await addPasskey(h, admin, adminDevice);

    const userAtAdmin = await passkeyLogin(h, userDevice, { door: 'admin' });
    const userByNameAtAdmin = await passkeyLogin(h, userDevice, { door: 'admin', username: user.username });
    const adminAtUser = await passkeyLogin(h, adminDevice, { door: 'user' });
    for (const refusal of [userAtAdmin, userByNameAtAdmin, adminAtUser]) {
      expect(refusal.status).toBe(401);
      expect(refusal.body.message).toBe(REFUSAL);
    }
    const adminIn = await passkeyLogin(h, adminDevice, { door: 'admin', username: admin.username });
    expect(adminIn.status).toBe(200);
    expect(adminIn.body.data.user.role).toBe('admin');
    expect((await h.call('POST', '/api/v1/admin/auth/passkeys/login/verify', { response: {} })).status).toBe(
      400,
    );
  });
});

describe('removing passkeys', () => {
  it('asks for the password; a removed passkey signs nobody in; the count, event and mail follow', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const device = new SoftAuthenticator();
    const passkey = await addPasskey(h, user, device, 'Phone');
    const path = `/auth/passkeys/${passkey.id}`;

    expect((await h.call('DELETE', path, { password: 'wrong-password' }, { token: user.token })).status).toBe(
      400,
    );
    expect((await h.call('DELETE', path, {}, { token: user.token })).status).toBe(400);
    expect(
      (
        await h.call(
          'DELETE',
          '/auth/passkeys/nothing-here',
          { password: user.password },
          { token: user.token },
        )
      ).status,
    ).toBe(404);
    const removed = await h.call(
      'DELETE',
      `/api/v1${path}`,
      { password: user.password },
      { token: user.token },
    );
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: passkey.id, removed: true });

    const after = await passkeyLogin(h, device);
    expect(after.status).toBe(401);
    expect(after.body.message).toBe(REFUSAL);
    expect((await h.call('GET', '/auth/passkeys', undefined, { token: user.token })).body.data).toEqual([]);
    expect((await h.call('GET', '/auth/security', undefined, { token: user.token })).body.data.passkeys).toBe(
      0,
    );
    expect(
      h.mail.sent.some((mail) => mail.to === user.email && /passkey was removed/i.test(mail.subject)),
    ).toBe(true);
    expect((await h.call('DELETE', path, { password: user.password }, { token: user.token })).status).toBe(
      404,
    );
  });

  it("removes the account's passkeys with the administrators' second-factor reset", async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const admin = await adminAccount(h);
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);
    const reset = await h.call(
      'POST',
      `/api/v1/admin/accounts/${user.id}/totp/reset`,
      {},
      { token: admin.token },
    );
    expect(reset.status, reset.raw).toBe(200);
    expect((await passkeyLogin(h, device)).status).toBe(401);
    // Its sessions ended with it.
    expect((await h.call('GET', '/auth/me', undefined, { token: user.token })).status).toBe(401);
  });
});

describe('a passkey answering the login challenge', () => {
  it('offers the passkey among the methods and answers the challenge once', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    await h.enableTotp(user);
    const first = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(first.body.data.methods).toEqual(['totp', 'recovery_code']);
    const device = new SoftAuthenticator();
    await addPasskey(h, user, device);

    const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(login.body.data).toMatchObject({
      totp_required: true,
      methods: ['totp', 'recovery_code', 'passkey'],
    });
    const challenge_token = login.body.data.challenge_token as string;
    const options = await h.call('POST', '/auth/passkeys/challenge/options', { challenge_token });
    expect(options.status).toBe(200);
    const response = device.authenticate(options.body.data);
    const session = await h.call('POST', '/auth/passkeys/challenge/verify', { challenge_token, response });
    expect(session.status, session.raw).toBe(200);
    expect(session.body.data).toMatchObject({ token_type: 'Bearer', user: { id: user.id } });

    // The challenge is spent: neither a passkey again nor a TOTP code answers it.
    const again = await h.call('POST', '/auth/passkeys/challenge/options', { challenge_token });
    expect(again.status).toBe(401);
    expect(again.body.message).toBe(REFUSAL);
    expect(
      (await h.call('POST', '/auth/passkeys/challenge/verify', { challenge_token, response })).status,
    ).toBe(401);
  });

  it("refuses another account's passkey and a made-up challenge token", async () => {
    const h = authHarness();
    const [owner, other] = [await h.registerUser(), await h.registerUser()];
    await h.enableTotp(owner);
    const device = new SoftAuthenticator();
    const otherDevice = new SoftAuthenticator();
    await addPasskey(h, owner, device);
    await addPasskey(h, other, otherDevice);
    const login = await h.call('POST', '/auth/login', { username: owner.username, password: owner.password });
    const challenge_token = login.body.data.challenge_token as string;
    const options = await h.call('POST', '/auth/passkeys/challenge/options', { challenge_token });
    const foreign = await h.call('POST', '/auth/passkeys/challenge/verify', {
      challenge_token,
      response: otherDevice.authenticate({ ...options.body.data, allowCredentials: [] }),
    });
    expect(foreign.status).toBe(401);
    expect(foreign.body.message).toBe(REFUSAL);
    expect(
      (await h.call('POST', '/auth/passkeys/challenge/options', { challenge_token: 'made.up.token' })).status,
    ).toBe(401);
  });
});
