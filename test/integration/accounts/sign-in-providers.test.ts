// Sign in with another provider (docs/ACCOUNTS.md "Sign in with another provider"): a real OIDC issuer
// (oidc-provider) and a fake GitHub on 127.0.0.1, a stand-in issuer for spoiled ID tokens; the accounts
// group called in process. Every refusal reaches the console as words, and nothing is created.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import type { SignInProviderSettings } from '#lib/platform/config/schema.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import {
  CLIENT,
  callbackOf,
  followAuthorization,
  type People,
  signInAt,
  startFakeGithub,
  startOidcIssuer,
  startStandInIssuer,
} from '#test/support/sign-in-providers.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const BASE = 'http://localhost:3000';
const people: People = new Map();
let real: Awaited<ReturnType<typeof startOidcIssuer>>;
let standIn: Awaited<ReturnType<typeof startStandInIssuer>>;
let github: Awaited<ReturnType<typeof startFakeGithub>>;
let h: ReturnType<typeof authHarness>;
const clock = movableClock();
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 7)}`;

function provider(
  id: string,
  kind: 'oidc' | 'github',
  more: Partial<SignInProviderSettings>,
): SignInProviderSettings {
  return {
    id,
    kind,
    label: id === 'github' ? 'GitHub' : `Issuer ${id}`,
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    admin_door: false,
    github_url: 'https://github.com',
    github_api_url: 'https://api.github.com',
    ...more,
  };
}

beforeAll(async () => {
  await provisionTestStack();
  real = await startOidcIssuer([callbackOf(BASE, 'local')], people);
  standIn = await startStandInIssuer({
    sub: 'stand-in-1',
    email: 'standin@example.test',
    email_verified: true,
  });
  github = await startFakeGithub({ id: 4242, email: `gh-${unique()}@example.test`, verified: true });
  h = authHarness({
    clock,
    signInProviders: [
      provider('local', 'oidc', { issuer: real.issuer }),
      provider('standin', 'oidc', { issuer: standIn.issuer }),
      provider('github', 'github', { github_url: github.url, github_api_url: github.url, admin_door: true }),
    ],
  });
});

afterAll(async () => {
  await Promise.all([real?.close(), standIn?.close(), github?.close()]);
});

/** A person the real issuer knows, with a fresh verified (or not) address. */
function person(verified = true) {
  const sub = `p-${unique()}`;
  const email = `${sub}@example.test`;
  people.set(sub, { email, email_verified: verified });
  return { sub, email };
}

async function start(id: string, query = '') {
  const res = await h.call('GET', `/api/v1/auth/oauth/${id}/start${query}`);
  expect(res.status, res.raw).toBe(302);
  expect(res.headers['cache-control']).toBe('no-store');
  return res.headers.location as string;
}

/** The callback at the service: where it sends the console (`#/oauth?...`), as parameters. */
async function callback(url: string) {
  const at = new URL(url);
  const res = await h.call('GET', `${at.pathname}${at.search}`);
  expect(res.status, res.raw).toBe(302);
  const location = res.headers.location as string;
  expect(location.startsWith(`${BASE}/#/oauth?`)).toBe(true);
  return new URLSearchParams(location.slice(location.indexOf('?') + 1));
}

async function exchange(ticket: string) {
  return h.call('POST', '/api/v1/auth/oauth/ticket', { ticket });
}

/** A first sign-in through the real issuer, to the username form, then the new account's session. */
async function signUp(who: { sub: string }, username = `n_${unique()}`) {
  const back = await callback(await signInAt(await start('local'), who.sub));
  const form = await exchange(back.get('ticket')!);
  expect(form.status, form.raw).toBe(200);
  const made = await h.call('POST', '/api/v1/auth/oauth/signup', {
    ticket: form.body.data.signup.ticket,
    username,
  });
  expect(made.status, made.raw).toBe(201);
  return { username, session: made.body.data };
}

describe('sign in with another provider', () => {
  it('lists the providers for the login form, and the administrators door only where allowed', async () => {
    const list = await h.call('GET', '/api/v1/auth/providers');
    expect(list.body.data).toEqual([
      { id: 'local', label: 'Issuer local' },
      { id: 'standin', label: 'Issuer standin' },
      { id: 'github', label: 'GitHub' },
    ]);
    expect((await h.call('GET', '/auth/providers?door=admin')).body.data).toEqual([
      { id: 'github', label: 'GitHub' },
    ]);
    const admin = await h.call('GET', '/api/v1/auth/oauth/local/start?door=admin');
    expect(admin.status).toBe(403);
    expect((await h.call('GET', '/api/v1/auth/oauth/nobody/start')).status).toBe(404);
  });

  it('starts with PKCE S256, a state and a nonce', async () => {
    const url = new URL(await start('local'));
    expect(url.origin).toBe(real.issuer);
    const q = url.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('redirect_uri')).toBe(callbackOf(BASE, 'local'));
  });

  it("bounds a stranger's starts (each stores a state) per address: 429 past the limit, others served", async () => {
    const limited = authHarness({
      clock,
      limits: { ipPerMinute: 3 },
      signInProviders: [provider('local', 'oidc', { issuer: real.issuer })],
    });
    const from = (ip: string) => limited.call('GET', '/api/v1/auth/oauth/local/start', undefined, { ip });

    const burst = await Promise.all(Array.from({ length: 6 }, () => from('198.51.100.77')));
    const other = await from('198.51.100.78');

    const statuses = burst.map((answer) => answer.status).sort();
    expect(statuses).toEqual([302, 302, 302, 429, 429, 429]);
    expect(burst.find((answer) => answer.status === 429)?.headers['retry-after']).toMatch(/^\d+$/);
    expect(other.status).toBe(302);
  });

  it('creates the account on a first sign-in (after the username form), then logs into it', async () => {
    const who = person();
    const back = await callback(await signInAt(await start('local'), who.sub));
    const ticket = back.get('ticket')!;
    expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const form = await exchange(ticket);
    expect(form.body.data.signup).toMatchObject({
      provider: 'local',
      label: 'Issuer local',
      email: who.email,
    });
    // The ticket is single-use.
    expect((await exchange(ticket)).status).toBe(401);
    // The same name rules as registration.
    const bad = await h.call('POST', '/api/v1/auth/oauth/signup', {
      ticket: form.body.data.signup.ticket,
      username: 'a b',
    });
    expect(bad.status).toBe(400);
    const username = `n_${unique()}`;
    const made = await h.call('POST', '/api/v1/auth/oauth/signup', {
      ticket: form.body.data.signup.ticket,
      username,
    });
    expect(made.status, made.raw).toBe(201);
    expect(made.body.data).toMatchObject({
      token_type: 'Bearer',
      user: { username, email: who.email, email_verified: true },
    });
    expect(made.body.data.device_token).toBeTruthy();
    const me = await h.call('GET', '/auth/me', undefined, { token: made.body.data.token });
    expect(me.body.data.username).toBe(username);
    // The signup ticket is spent too.
    const again = await h.call('POST', '/api/v1/auth/oauth/signup', {
      ticket: form.body.data.signup.ticket,
      username: `x_${unique()}`,
    });
    expect(again.status).toBe(401);

    // A second sign-in logs into the same account.
    const second = await callback(await signInAt(await start('local'), who.sub));
    const session = await exchange(second.get('ticket')!);
    expect(session.status).toBe(200);
    expect(session.body.data.user.id).toBe(made.body.data.user.id);
    const events = await h.call('GET', '/auth/security/events', undefined, {
      token: session.body.data.token,
    });
    expect(events.body.data.items[0]).toMatchObject({ type: 'login', method: 'provider' });
    const listed = await h.call('GET', '/api/v1/auth/identities', undefined, {
      token: session.body.data.token,
    });
    expect(listed.body.data).toEqual([
      expect.objectContaining({ provider: 'local', label: 'Issuer local', email: who.email }),
    ]);
  });

  it('links nothing by a matching e-mail: the owner is told to link from the security page', async () => {
    const owner = await h.registerUser();
    const who = person();
    people.set(who.sub, { email: owner.email, email_verified: true });
    const back = await callback(await signInAt(await start('local'), who.sub));
    expect(back.get('ticket')).toBeNull();
    expect(back.get('error')).toMatch(
      /already uses .* log in to it and link Issuer local from the security page/,
    );
    const listed = await h.call('GET', '/auth/identities', undefined, { token: owner.token });
    expect(listed.body.data).toEqual([]);
  });

  it('links from the security page after the password; the identity then logs in; unlinking keeps the password', async () => {
    const owner = await h.registerUser();
    const who = person();
    const wrong = await h.call(
      'POST',
      '/api/v1/auth/identities/local',
      { current_password: 'not-it-at-all' },
      { token: owner.token },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/current_password: is incorrect/);
    const started = await h.call(
      'POST',
      '/api/v1/auth/identities/local',
      { current_password: owner.password },
      { token: owner.token },
    );
    expect(started.status, started.raw).toBe(200);
    const linked = await callback(await signInAt(started.body.data.url, who.sub));
    expect(linked.get('linked')).toBe('local');
    const listed = await h.call('GET', '/auth/identities', undefined, { token: owner.token });
    expect(listed.body.data).toEqual([expect.objectContaining({ provider: 'local', email: who.email })]);
    expect(h.mail.to(owner.email).map((mail) => mail.subject)).toContain(
      'A sign-in provider was linked to your account',
    );

    const back = await callback(await signInAt(await start('local'), who.sub));
    const session = await exchange(back.get('ticket')!);
    expect(session.body.data.user.id).toBe(owner.id);

    // One identity links one account.
    const other = await h.registerUser();
    const again = await h.call(
      'POST',
      '/api/v1/auth/identities/local',
      { current_password: other.password },
      { token: other.token },
    );
    const refused = await callback(await signInAt(again.body.data.url, who.sub));
    expect(refused.get('error')).toMatch(/already linked to another account/);

    const unlinked = await h.call('DELETE', '/api/v1/auth/identities/local', undefined, {
      token: owner.token,
    });
    expect(unlinked.status, unlinked.raw).toBe(200);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: owner.token });
    expect(events.body.data.items.map((event: { type: string }) => event.type)).toEqual(
      expect.arrayContaining(['provider_linked', 'provider_unlinked']),
    );
    expect((await h.call('GET', '/auth/identities', undefined, { token: owner.token })).body.data).toEqual(
      [],
    );
    const gone = await callback(await signInAt(await start('local'), who.sub));
    // No longer linked: the address is the owner's, so it does not sign up either.
    expect(gone.get('error')).toBeNull();
    expect((await exchange(gone.get('ticket')!)).body.data.signup).toBeTruthy();
  });

  it('refuses to unlink the last way in of an account a provider created', async () => {
    const { session } = await signUp(person());
    const res = await h.call('DELETE', '/api/v1/auth/identities/local', undefined, { token: session.token });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/last way to sign in/);
    expect(
      (await h.call('GET', '/auth/identities', undefined, { token: session.token })).body.data,
    ).toHaveLength(1);
    // A passkey is another way in (the count its store keeps), and so is a password set since (a reset).
    await h.table.update(accountKey(session.user.id), {
      UpdateExpression: 'SET passkey_count = :one',
      ExpressionAttributeValues: { ':one': 1 },
    });
    const withPasskey = await h.call('DELETE', '/auth/identities/local', undefined, { token: session.token });
    expect(withPasskey.status, withPasskey.raw).toBe(200);
    const again = await signUp(person());
    await h.table.update(accountKey(again.session.user.id), {
      UpdateExpression: 'SET password_hash = :set',
      ExpressionAttributeValues: { ':set': await hashPassword('a password set by a reset') },
    });
    const withPassword = await h.call('DELETE', '/auth/identities/local', undefined, {
      token: again.session.token,
    });
    expect(withPassword.status, withPassword.raw).toBe(200);
  });

  it('asks for the TOTP step when the account has TOTP', async () => {
    const owner = await h.registerUser();
    await h.enableTotp(owner, clock);
    const who = person();
    const started = await h.call(
      'POST',
      '/auth/identities/local',
      { current_password: owner.password },
      { token: owner.token },
    );
    expect((await callback(await signInAt(started.body.data.url, who.sub))).get('linked')).toBe('local');
    const back = await callback(await signInAt(await start('local'), who.sub));
    const answer = await exchange(back.get('ticket')!);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ totp_required: true, methods: ['totp', 'recovery_code'] });
    expect(answer.body.data.token).toBeUndefined();
  });

  it('refuses a disabled account', async () => {
    const who = person();
    const { session } = await signUp(who);
    await h.accounts.repository.setStatus(session.user.id, 'disabled');
    const back = await callback(await signInAt(await start('local'), who.sub));
    expect(back.get('error')).toBe('account disabled');
  });

  it('signs in with GitHub: a verified primary e-mail creates the account, the next sign-in logs in', async () => {
    const back = await callback(await followAuthorization(await start('github')));
    const form = await exchange(back.get('ticket')!);
    expect(form.body.data.signup.email).toBe(github.user.email);
    const made = await h.call('POST', '/auth/oauth/signup', {
      ticket: form.body.data.signup.ticket,
      username: `g_${unique()}`,
    });
    expect(made.status, made.raw).toBe(201);
    const next = await callback(await followAuthorization(await start('github')));
    expect((await exchange(next.get('ticket')!)).body.data.user.id).toBe(made.body.data.user.id);
  });
});

describe('the administrators door', () => {
  it('signs an administrator in only at its door, with a provider whose admin_door is on', async () => {
    const password = 'admin-password-1';
    const admin = await h.accounts.repository.create({
      username: `adm_${unique()}`,
      email: null,
      emailVerified: false,
      role: 'admin',
      passwordHash: await hashPassword(password),
    });
    const login = await h.call('POST', '/admin/auth/login', { username: admin.username, password });
    const token = login.body.data.token as string;
    const notHere = await h.call('POST', '/auth/identities/local', { current_password: password }, { token });
    expect(notHere.status).toBe(403);
    github.user.id = 5151;
    github.user.email = `admin-${unique()}@example.test`;
    const started = await h.call(
      'POST',
      '/auth/identities/github',
      { current_password: password },
      { token },
    );
    expect((await callback(await followAuthorization(started.body.data.url))).get('linked')).toBe('github');
    const atUsers = await callback(await followAuthorization(await start('github')));
    expect(atUsers.get('error')).toMatch(/Administrators sign in at the administrators/);
    const atAdmins = await callback(await followAuthorization(await start('github', '?door=admin')));
    const session = await exchange(atAdmins.get('ticket')!);
    expect(session.body.data.user).toMatchObject({ id: admin.id, role: 'admin' });
    // A user's identity does not pass the administrators' door.
    github.user.id = 4242;
    const user = await callback(await followAuthorization(await start('github', '?door=admin')));
    expect(user.get('error')).toMatch(/not an administrator/);
  });
});

describe('refusals (nothing created)', () => {
  it('refuses a provider error in the query', async () => {
    const state = new URL(await start('local')).searchParams.get('state')!;
    const back = await callback(`${callbackOf(BASE, 'local')}?error=access_denied&state=${state}`);
    expect(back.get('error')).toMatch(/refused the sign-in: access_denied/);
    const bare = await callback(`${callbackOf(BASE, 'local')}?error=access_denied`);
    expect(bare.get('error')).toMatch(/access_denied/);
  });

  it('refuses a replayed state, also concurrently, and a foreign one', async () => {
    const who = person();
    const url = await signInAt(await start('local'), who.sub);
    const [one, two] = await Promise.all([callback(url), callback(url)]);
    const outcomes = [one, two].map((q) => (q.get('ticket') ? 'ticket' : q.get('error')));
    expect(outcomes.filter((o) => o === 'ticket')).toHaveLength(1);
    expect(outcomes.join()).toMatch(/already used, has expired or was not started here/);
    const replay = await callback(url);
    expect(replay.get('error')).toMatch(/already used/);
    // Foreign: a state nobody issued, and one issued for another provider.
    const made = new URL(url);
    made.searchParams.set('state', 'x'.repeat(43));
    expect((await callback(made.toString())).get('error')).toMatch(/not started here/);
    const githubState = new URL(await start('github')).searchParams.get('state')!;
    expect(
      (await callback(`${callbackOf(BASE, 'local')}?code=abc&state=${githubState}`)).get('error'),
    ).toMatch(/not started here/);
  });

  it('refuses a state older than 10 minutes', async () => {
    const url = await start('local');
    const back = await signInAt(url, person().sub);
    clock.advance(11 * 60_000);
    try {
      expect((await callback(back)).get('error')).toMatch(/expired/);
    } finally {
      clock.advance(-11 * 60_000);
    }
  });

  it('refuses a wrong nonce at the real issuer', async () => {
    const url = new URL(await start('local'));
    url.searchParams.set('nonce', 'a-nonce-the-service-never-made');
    const back = await callback(await signInAt(url.toString(), person().sub));
    expect(back.get('error')).toMatch(/nonce/);
  });

  it.each([
    ['another audience', { aud: 'someone-else' }, /aud/],
    ['an expired ID token', { exp: Math.floor(Date.now() / 1000) - 3600 }, /exp/],
    ['a wrong nonce', { nonce: 'not-ours' }, /nonce/],
    ['a signature by another key', { foreignKey: true }, /signature|key/i],
  ])('refuses %s', async (_name, spoil, message) => {
    standIn.spoil(spoil);
    try {
      const back = await callback(await followAuthorization(await start('standin')));
      expect(back.get('ticket')).toBeNull();
      expect(back.get('error')).toMatch(message);
    } finally {
      standIn.spoil({});
    }
    expect(await h.accounts.repository.ownerOf('standin@example.test')).toBeUndefined();
  });

  it('refuses an unverified e-mail (OIDC and GitHub)', async () => {
    const who = person(false);
    const back = await callback(await signInAt(await start('local'), who.sub));
    expect(back.get('error')).toMatch(/no verified e-mail address; no account was created/);
    expect(await h.accounts.repository.ownerOf(who.email)).toBeUndefined();
    github.user.id = 777;
    github.user.email = `unverified-${unique()}@example.test`;
    github.user.verified = false;
    const gh = await callback(await followAuthorization(await start('github')));
    expect(gh.get('error')).toMatch(/GitHub account has no verified e-mail/);
    expect(await h.accounts.repository.ownerOf(github.user.email)).toBeUndefined();
  });

  it('refuses a malformed ticket with a 400 naming it', async () => {
    const res = await h.call('POST', '/auth/oauth/ticket', { ticket: 'short' });
    expect(res.status).toBe(400);
    expect(res.raw).toMatch(/must be a sign-in ticket/);
  });
});
