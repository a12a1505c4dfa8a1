// Passkey ceremonies through the accounts harness (test/support/accounts.ts), answered by a software
// authenticator (test/support/webauthn.ts): adding one with a session and the password, and a passwordless
// login at either door.
import { expect } from 'vitest';
import type { authHarness } from './accounts.ts';
import { SoftAuthenticator } from './webauthn.ts';

type Harness = ReturnType<typeof authHarness>;

/** Adds a passkey held by `device` to the user's account; answers the created passkey. */
export async function addPasskey(
  h: Harness,
  user: { token: string; password: string },
  device: SoftAuthenticator,
  name?: string,
) {
  const options = await h.call(
    'POST',
    '/auth/passkeys/register/options',
    { password: user.password },
    { token: user.token },
  );
  expect(options.status).toBe(200);
  const verified = await h.call(
    'POST',
    '/auth/passkeys/register/verify',
    { response: device.register(options.body.data), ...(name ? { name } : {}) },
    { token: user.token },
  );
  expect(verified.status, verified.raw).toBe(201);
  return verified.body.data as { id: string; name: string; created_at: string; last_used_at: string | null };
}

/** Options at a door, then the device's answer to them (bent as asked); answers the verify call. */
export async function passkeyLogin(
  h: Harness,
  device: SoftAuthenticator,
  input: {
    username?: string;
    door?: 'user' | 'admin';
    bend?: Parameters<SoftAuthenticator['authenticate']>[1];
  } = {},
) {
  const prefix = input.door === 'admin' ? '/admin/auth' : '/auth';
  const options = await h.call(
    'POST',
    `${prefix}/passkeys/login/options`,
    input.username ? { username: input.username } : {},
  );
  expect(options.status).toBe(200);
  const response = device.authenticate(options.body.data, input.bend);
  return h.call('POST', `${prefix}/passkeys/login/verify`, { response });
}

/** A device holding a credential the service never saw (registered against nothing). */
export function stranger(): SoftAuthenticator {
  const device = new SoftAuthenticator();
  device.register({ challenge: 'AAAAAAAAAAAAAAAAAAAAAA', rp: { id: 'localhost' }, user: { id: 'AAAA' } });
  return device;
}
