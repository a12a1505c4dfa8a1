// Password guessing is limited per account, whatever the addresses (docs/DESIGN.md 10): after 10 consecutive
// failures logins answer 429 without evaluating the password, backing off 1, 2, 4, 8, then at most 15
// minutes; a right password resets the count. Per-address limits key IPv6 clients by their /64.
import { beforeAll, describe, expect, it, vi } from 'vitest';

// Every argon2 verification of the account flows, counted (the limit is about not evaluating).
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

import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const addressN = (n: number) => `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`;

describe('per-account password guessing limit', () => {
  it('evaluates at most 10 of 50 concurrent wrong passwords from 50 addresses, and refuses the rest with 429', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    verifications.count = 0;
    // Act
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        h.call(
          'POST',
          '/auth/login',
          { username: user.username, password: `wrong-${n}` },
          { ip: addressN(n) },
        ),
      ),
    );
    // Assess
    expect(verifications.count).toBeLessThanOrEqual(10);
    expect(verifications.count).toBeGreaterThanOrEqual(9);
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(verifications.count);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(50 - verifications.count);
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused[0]!.body.data.retry_after).toBeGreaterThan(0);
    // The right password now waits too, unevaluated.
    verifications.count = 0;
    const right = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(right.status).toBe(429);
    expect(verifications.count).toBe(0);
  });

  it('backs off 1 minute after 10 failures, doubling per further failure up to 15 minutes; success resets', async () => {
    // Prepare
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const wrong = (ip = '203.0.113.1') =>
      h.call('POST', '/auth/login', { username: user.username, password: 'not-the-password' }, { ip });
    for (let n = 0; n < 10; n++) expect((await wrong(addressN(n))).status).toBe(401);
    // Act + Assess: each back-off, then one more failure.
    for (const minutes of [1, 2, 4, 8, 15, 15]) {
      const locked = await wrong();
      expect(locked.status).toBe(429);
      expect(Number(locked.headers['retry-after'])).toBe(minutes * 60);
      clock.advance(minutes * 60_000 - 2000);
      expect((await wrong()).status).toBe(429);
      clock.advance(2000);
      expect((await wrong()).status).toBe(401);
    }
    clock.advance(15 * 60_000);
    const right = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(right.status).toBe(200);
    // The count starts again: 10 more failures before a back-off.
    for (let n = 0; n < 10; n++) expect((await wrong()).status).toBe(401);
    expect((await wrong()).status).toBe(429);
  });

  it('locks an unknown username exactly like an account, so a lock tells nobody who exists', async () => {
    const h = authHarness();
    const statuses: number[] = [];
    for (let n = 0; n < 11; n++) {
      statuses.push(
        (
          await h.call(
            'POST',
            '/auth/login',
            { username: 'nobody_at_all', password: 'guess-guess' },
            { ip: addressN(n) },
          )
        ).status,
      );
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), 429]);
  });

  it('counts a username and its e-mail as one account, and the wrong door as a failure', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    for (let n = 0; n < 5; n++) {
      await h.call('POST', '/auth/login', { username: user.email, password: 'nope-nope' });
      await h.call('POST', '/admin/auth/login', { username: user.username, password: user.password });
    }
    expect(
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).status,
    ).toBe(429);
  });
});

describe('per-address limit', () => {
  it('keys IPv6 clients by their /64: a new address in the same /64 is the same bucket', async () => {
    const h = authHarness({ limits: { ipPerMinute: 3 } });
    const statuses: number[] = [];
    for (let n = 1; n <= 4; n++) {
      const answer = await h.call(
        'POST',
        '/auth/password/reset/code',
        { email: `v6-${n}-${Date.now()}@example.test` },
        { ip: `2001:db8:aa:bb::${n.toString(16)}` },
      );
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const elsewhere = await h.call(
      'POST',
      '/auth/password/reset/code',
      { email: `v6-other-${Date.now()}@example.test` },
      { ip: '2001:db8:aa:bc::1' },
    );
    expect(elsewhere.status).toBe(200);
  });
});
