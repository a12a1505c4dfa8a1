// Nobody locks an owner out (docs/ACCOUNTS.md "Device tokens", "Password guessing"): whoever knows a
// username can keep its per-account guard closed, but a login that presents a live device token of the
// account is held only by that token's own guard; without one the account's bound holds (at most 10
// evaluations, then one per back-off), and a request the lock refuses never arms or extends it.
import { beforeAll, describe, expect, it, vi } from 'vitest';

// Every argon2 verification of the account flows, counted (the limits are about not evaluating).
const verifications = vi.hoisted(() => ({ count: 0 }));
vi.mock('#lib/accounts/passwords.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('#lib/accounts/passwords.ts')>();
  return {
    ...original,
    verifyPassword: (hash: string | undefined, password: string) => {
      verifications.count++;
      return original.verifyPassword(hash, password);
    },
  };
});

import { deviceDigest, deviceKey } from '#lib/accounts/device-tokens.ts';
import { authHarness, createTestAccount, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const addressN = (n: number) => `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`;
/** The identifier in the attacker's spelling: username or e-mail, any case. */
const spelled = (user: { username: string; email: string }, n: number) =>
  [user.username, user.username.toUpperCase(), user.email, user.email.toUpperCase()][n % 4]!;

type Harness = ReturnType<typeof authHarness>;

async function lockAccount(h: Harness, username: string) {
  for (let n = 0; n < 10; n++) {
    await h.call('POST', '/auth/login', { username, password: `wrong-${n}` }, { ip: addressN(n) });
  }
  const locked = await h.call('POST', '/auth/login', { username, password: 'wrong-again' });
  expect(locked.status).toBe(429);
}

describe('device tokens against a lockout', () => {
  it('lets the owner in with a device token throughout 100 wrong logins from 100 addresses over an hour; without one at most 10 are evaluated, then one per back-off', async () => {
    // Prepare
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    let device = user.deviceToken;
    expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/);
    let attackerEvaluations = 0;
    const ownerStatuses: number[] = [];
    // Act: one wrong login every 36 seconds, from a new address and in any spelling; the owner logs in
    // with the device token every tenth.
    for (let n = 0; n < 100; n++) {
      clock.advance(36_000);
      verifications.count = 0;
      const wrong = await h.call(
        'POST',
        '/auth/login',
        { username: spelled(user, n), password: `guess-${n}` },
        { ip: addressN(n) },
      );
      attackerEvaluations += verifications.count;
      expect([401, 429]).toContain(wrong.status);
      expect(verifications.count).toBe(wrong.status === 401 ? 1 : 0);
      if (n % 10 === 9) {
        const owner = await h.call(
          'POST',
          '/auth/login',
          { username: user.username, password: user.password, device_token: device },
          { ip: '203.0.113.77' },
        );
        ownerStatuses.push(owner.status);
        if (owner.status === 200) device = owner.body.data.device_token;
      }
    }
    // Assess: the owner was never held; the attacker had 10 evaluations, then one per back-off (1, 2, 4,
    // 8, then 15 minutes: at most 7 in the 54 minutes left of the hour).
    expect(ownerStatuses).toEqual(Array(10).fill(200));
    expect(attackerEvaluations).toBeGreaterThanOrEqual(10);
    expect(attackerEvaluations).toBeLessThanOrEqual(17);
    // The owner's logins did not open the account's guard for the attacker.
    const withoutDevice = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
    });
    expect(withoutDevice.status).toBe(429);
  });

  it('admits the owner with a device token while 60 concurrent wrong logins are held to 10 evaluations', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    verifications.count = 0;
    // Act
    const [owner, ...attack] = await Promise.all([
      h.call('POST', '/auth/login', {
        username: user.email.toUpperCase(),
        password: user.password,
        device_token: user.deviceToken,
      }),
      ...Array.from({ length: 60 }, (_, n) =>
        h.call(
          'POST',
          '/auth/login',
          { username: spelled(user, n), password: `wrong-${n}` },
          { ip: addressN(n) },
        ),
      ),
    ]);
    // Assess
    expect(owner!.status).toBe(200);
    expect(owner!.body.data.device_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const evaluatedWrong = attack.filter((answer) => answer.status === 401).length;
    expect(evaluatedWrong).toBeLessThanOrEqual(10);
    expect(attack.filter((answer) => answer.status === 429)).toHaveLength(60 - evaluatedWrong);
    expect(verifications.count).toBe(evaluatedWrong + 1);
  });

  it('never arms or extends a lock by a request the lock refuses, however many arrive at once', async () => {
    // Prepare: 10 failures arm a 1-minute back-off.
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    await lockAccount(h, user.username);
    clock.advance(30_000);
    // Act: 40 concurrent guesses inside the back-off.
    verifications.count = 0;
    const refused = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        h.call('POST', '/auth/login', { username: user.username, password: `x-${n}` }, { ip: addressN(n) }),
      ),
    );
    // Assess: all refused unevaluated, each naming the same end; at that end the owner's password is
    // evaluated (and right), with no device token at all.
    expect(refused.map((answer) => answer.status)).toEqual(Array(40).fill(429));
    expect(new Set(refused.map((answer) => answer.headers['retry-after']))).toEqual(new Set(['30']));
    expect(verifications.count).toBe(0);
    clock.advance(30_000);
    const right = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(right.status).toBe(200);
  });

  it("voids a device token after 10 wrong passwords; another account's token is no token", async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    const other = await h.registerUser();
    await lockAccount(h, user.username);
    // Act + Assess: the token's own guard evaluates 10 wrong passwords, then the token is void.
    for (let n = 0; n < 10; n++) {
      const wrong = await h.call('POST', '/auth/login', {
        username: user.username,
        password: `device-wrong-${n}`,
        device_token: user.deviceToken,
      });
      expect(wrong.status).toBe(401);
    }
    const voided = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: user.deviceToken,
    });
    expect(voided.status).toBe(429);
    const foreign = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: other.deviceToken,
    });
    expect(foreign.status).toBe(429);
    const garbage = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: 'not-a-device-token',
    });
    expect(garbage.status).toBe(429);
  });

  it('replaces a device token at each login, stores only its digest, and keeps it 90 days', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const again = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: user.deviceToken,
    });
    expect(again.status).toBe(200);
    const fresh = again.body.data.device_token as string;
    expect(fresh).not.toBe(user.deviceToken);
    expect(await h.table.get(deviceKey(user.id, deviceDigest(user.deviceToken)))).toBeUndefined();
    const stored = await h.table.get(deviceKey(user.id, deviceDigest(fresh)));
    expect(JSON.stringify(stored)).not.toContain(fresh);
    const days = ((stored!.expires_at as number) - Date.now() / 1000) / 86_400;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
    await lockAccount(h, user.username);
    const replaced = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: user.deviceToken,
    });
    expect(replaced.status).toBe(429);
  });

  it("is ended by revoke-others (all but the caller's), by a password reset and by disabling", async () => {
    // Prepare: two devices of one owner.
    const h = authHarness();
    const user = await h.registerUser();
    const second = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    const { token: secondSession, device_token: secondDevice } = second.body.data;
    // Act: revoke-others from the second device.
    const revoked = await h.call('POST', '/auth/sessions/revoke-others', {}, { token: secondSession });
    expect(revoked.status).toBe(200);
    await lockAccount(h, user.username);
    // Assess: the first device's token is gone, the caller's kept.
    const login = (device_token: string, password = user.password) =>
      h.call('POST', '/auth/login', { username: user.username, password, device_token });
    expect((await login(user.deviceToken)).status).toBe(429);
    const kept = await login(secondDevice);
    expect(kept.status).toBe(200);
    // A password reset ends it (and answers a token of its own).
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const reset = await h.call('POST', '/auth/password/reset', {
      email: user.email,
      code: h.mail.codeFor(user.email),
      new_password: 'reset-pw-123',
    });
    expect(reset.status).toBe(200);
    await lockAccount(h, user.username);
    expect((await login(kept.body.data.device_token, 'reset-pw-123')).status).toBe(429);
    // Disabling ends it, also once the account is enabled again.
    const device = (await login(reset.body.data.device_token, 'reset-pw-123')).body.data.device_token;
    expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await h.accounts.repository.setStatus(user.id, 'disabled');
    await h.accounts.repository.setStatus(user.id, 'active');
    await lockAccount(h, user.username);
    expect((await login(device, 'reset-pw-123')).status).toBe(429);
  });

  it('holds for administrators too, at their door', async () => {
    const h = authHarness();
    const admin = await createTestAccount({ role: 'admin' });
    const username = admin.account.username;
    const first = await h.call('POST', '/admin/auth/login', { username, password: admin.password });
    expect(first.status).toBe(200);
    for (let n = 0; n < 10; n++) {
      await h.call('POST', '/admin/auth/login', { username, password: `wrong-${n}` }, { ip: addressN(n) });
    }
    const locked = await h.call('POST', '/admin/auth/login', { username, password: admin.password });
    expect(locked.status).toBe(429);
    const withDevice = await h.call('POST', '/admin/auth/login', {
      username: username.toUpperCase(),
      password: admin.password,
      device_token: first.body.data.device_token,
    });
    expect(withDevice.status).toBe(200);
    expect(withDevice.body.data.user.role).toBe('admin');
  });

  it('clears what a name collected while nobody held it: a pre-locked name does not lock its new owner', async () => {
    const h = authHarness();
    const username = `pre_${Date.now().toString(36)}`;
    await lockAccount(h, username);
    const user = await h.registerUser({ username });
    expect(user.token).toBeTruthy();
  });
});

describe('the second factor after a device-token login', () => {
  it("answers against the device's own TOTP budget, so a password thief spending the account's leaves the owner a way in", async () => {
    // Prepare: TOTP on; the thief knows the password but has no device token.
    const clock = movableClock();
    const h = authHarness({ clock, limits: { totpLogin: { perMinute: 60, burst: 60, perDay: 6 } } });
    const user = await h.registerUser();
    const { secret, recoveryCodes } = await h.enableTotp(user, clock);
    const { generate } = await import('otplib');
    const verify = (challenge_token: string, code: string) =>
      h.call('POST', '/auth/totp/verify', { challenge_token, code });
    // Act: the thief spends the account's daily budget over several challenges, recovery codes included.
    const statuses: number[] = [];
    for (let n = 0; n < 4; n++) {
      const challenge = (
        await h.call('POST', '/auth/login', { username: user.username, password: user.password })
      ).body.data.challenge_token;
      statuses.push(
        (await verify(challenge, '000000')).status,
        (await verify(challenge, 'aaaaa-aaaaa')).status,
      );
    }
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    // Assess: the owner, with the device token, gets in by TOTP code, then by recovery code.
    clock.advance(60_000);
    const owner = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: user.deviceToken,
    });
    expect(owner.body.data.totp_required).toBe(true);
    const code = await generate({ secret, epoch: Math.floor(clock().getTime() / 1000) });
    const session = await verify(owner.body.data.challenge_token, code);
    expect(session.status).toBe(200);
    const device = session.body.data.device_token as string;
    expect(device).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const again = await h.call('POST', '/auth/login', {
      username: user.username,
      password: user.password,
      device_token: device,
    });
    const byRecovery = await verify(again.body.data.challenge_token, recoveryCodes[0]!);
    expect(byRecovery.status).toBe(200);
    // The thief is still held by the account's budget.
    const thief = (await h.call('POST', '/auth/login', { username: user.username, password: user.password }))
      .body.data.challenge_token;
    expect((await verify(thief, recoveryCodes[1]!)).status).toBe(429);
  });
});
