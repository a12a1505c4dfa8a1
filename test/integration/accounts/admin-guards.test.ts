// Issue 29, finding 4: two administrators could disable each other at the same instant, and disabling another
// administrator or resetting their second factor needed no password. Now both need the acting
// administrator's current password (400 naming it), and whatever races, an administrator is disabled only
// while the one disabling stays an active administrator: never zero active administrators (the loser 409).
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { AppError } from '#lib/core/errors.ts';
import { API_PREFIX } from '#lib/http/routes.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;
const ADMIN_PASSWORD = 'admin-password-1';
const ACCOUNTS = `${API_PREFIX}/admin/accounts`;
/** Many password checks in a row: the per-account budget is not what these tests are about. */
const ROOMY = { credentialChecks: { perMinute: 10_000, burst: 10_000, perDay: 1_000_000 } };

async function adminOf(h: Harness) {
  const account = await h.accounts.repository.create({
    username: `boss_${randomBytes(4).toString('hex')}`,
    email: `boss_${randomBytes(4).toString('hex')}@example.test`,
    emailVerified: false,
    role: 'admin',
    passwordHash: await hashPassword(ADMIN_PASSWORD),
  });
  return { account, token: await logIn(h, account.username) };
}

async function logIn(h: Harness, username: string): Promise<string> {
  const login = await h.call('POST', '/admin/auth/login', { username, password: ADMIN_PASSWORD });
  expect(login.status).toBe(200);
  return login.body.data.token as string;
}

async function statusOf(h: Harness, id: string) {
  return (await h.table.get(accountKey(id)))?.status;
}

describe('disabling an administrator', () => {
  it("needs the acting administrator's current password: missing or wrong is 400 naming it, and changes nothing", async () => {
    // Prepare
    const h = authHarness({ limits: ROOMY });
    const [actor, target] = [await adminOf(h), await adminOf(h)];
    const patch = (body: object) =>
      h.call('PATCH', `${ACCOUNTS}/${target.account.id}`, body, { token: actor.token });

    // Act
    const missing = await patch({ status: 'disabled' });
    const wrong = await patch({ status: 'disabled', current_password: 'not-mine-1' });
    const targetStillIn = await h.call('GET', '/auth/me', undefined, { token: target.token });
    const right = await patch({ status: 'disabled', current_password: ADMIN_PASSWORD });

    // Assess
    for (const answer of [missing, wrong]) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^current_password:/);
    }
    expect(targetStillIn.status).toBe(200);
    expect(right.status).toBe(200);
    expect(right.body.data).toMatchObject({ id: target.account.id, status: 'disabled' });
    expect(await statusOf(h, target.account.id)).toBe('disabled');
    expect((await h.call('GET', '/auth/me', undefined, { token: target.token })).status).toBe(401);
    // Enabling again takes no password: it takes nobody's access away.
    const enabled = await patch({ status: 'active' });
    expect(enabled.status).toBe(200);
    expect(await statusOf(h, target.account.id)).toBe('active');
  });

  it('is refused (409) to an administrator who is no longer active, so the last active one always stays', async () => {
    // Prepare: `stale` authenticated while active, then another administrator disabled it before it acted
    // (what one side of a race sees).
    const h = authHarness({ limits: ROOMY });
    const [stale, target, other] = [await adminOf(h), await adminOf(h), await adminOf(h)];
    const disabled = await h.call(
      'PATCH',
      `${ACCOUNTS}/${stale.account.id}`,
      { status: 'disabled', current_password: ADMIN_PASSWORD },
      { token: other.token },
    );
    expect(disabled.status).toBe(200);

    // Act
    const refused = await h.accounts.admin
      .setStatus(stale.account, target.account.id, {
        status: 'disabled',
        current_password: ADMIN_PASSWORD,
      })
      .catch((error: unknown) => error);

    // Assess
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).errorName).toBe('conflict');
    expect((refused as AppError).message).toMatch(/last active administrator/);
    expect(await statusOf(h, target.account.id)).toBe('active');
  });

  it('two administrators disabling each other at the same instant leave at least one of them active, every time', async () => {
    // Prepare
    const h = authHarness({ limits: ROOMY });
    const [a, b, keeper] = [await adminOf(h), await adminOf(h), await adminOf(h)];
    const outcomes = new Set<string>();

    for (let round = 0; round < 12; round += 1) {
      const [tokenA, tokenB] = await Promise.all([
        logIn(h, a.account.username),
        logIn(h, b.account.username),
      ]);

      // Act: both requests in flight together.
      const [aDisablesB, bDisablesA] = await Promise.all([
        h.call(
          'PATCH',
          `${ACCOUNTS}/${b.account.id}`,
          { status: 'disabled', current_password: ADMIN_PASSWORD },
          { token: tokenA },
        ),
        h.call(
          'PATCH',
          `${ACCOUNTS}/${a.account.id}`,
          { status: 'disabled', current_password: ADMIN_PASSWORD },
          { token: tokenB },
        ),
      ]);

      // Assess
      const [statusA, statusB] = [await statusOf(h, a.account.id), await statusOf(h, b.account.id)];
      expect([statusA, statusB]).toContain('active');
      // A request that lost answers 409 (its transaction's check) or 401 (its session already ended).
      for (const answer of [aDisablesB, bDisablesA]) expect([200, 401, 409]).toContain(answer.status);
      expect(aDisablesB.status === 200 && bDisablesA.status === 200).toBe(false);
      outcomes.add(`${aDisablesB.status}/${bDisablesA.status}`);

      // Both active again for the next round (enabling needs no password).
      for (const id of [a.account.id, b.account.id]) {
        const enabled = await h.call(
          'PATCH',
          `${ACCOUNTS}/${id}`,
          { status: 'active' },
          { token: keeper.token },
        );
        expect(enabled.status).toBe(200);
      }
    }
    expect(outcomes.size).toBeGreaterThan(0);
  }, 120_000);
});

describe("resetting another administrator's TOTP", () => {
  it("needs the acting administrator's current password; an ordinary user's does not", async () => {
    // Prepare
    const clock = movableClock();
    const h = authHarness({ clock, limits: ROOMY });
    const [actor, target] = [await adminOf(h), await adminOf(h)];
    await h.enableTotp({ token: target.token, password: ADMIN_PASSWORD }, clock);
    const user = await h.registerUser();
    await h.enableTotp(user, clock);
    const reset = (id: string, body: object) =>
      h.call('POST', `${ACCOUNTS}/${id}/totp/reset`, body, { token: actor.token });

    // Act
    const missing = await reset(target.account.id, {});
    const wrong = await reset(target.account.id, { current_password: 'not-mine-1' });
    const stillOn = (await h.table.get(accountKey(target.account.id)))?.totp_enabled;
    const right = await reset(target.account.id, { current_password: ADMIN_PASSWORD });
    const userReset = await reset(user.id, {});

    // Assess
    for (const answer of [missing, wrong]) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^current_password:/);
    }
    expect(stillOn).toBe(true);
    expect(right.status).toBe(200);
    expect(right.body.data).toMatchObject({ id: target.account.id, totp_enabled: false });
    expect(userReset.status).toBe(200);
    expect(userReset.body.data).toMatchObject({ id: user.id, totp_enabled: false });
  });

  it('answers a malformed current_password 400 and an unknown account 404, never 5xx', async () => {
    const h = authHarness({ limits: ROOMY });
    const actor = await adminOf(h);
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const call = (path: string, body: object, method = 'POST') =>
      h.call(method, path, body, { token: actor.token });
    const answers = [
      await call(`${ACCOUNTS}/${actor.account.id}/totp/reset`, { current_password: 123 }),
      await call(`${ACCOUNTS}/${unknownId}`, { status: 'disabled', current_password: ['x'] }, 'PATCH'),
      await call(`${ACCOUNTS}/${actor.account.id}/totp/reset`, { current_password: 'x'.repeat(129) }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^current_password:/);
    }
    expect(
      (await call(`${ACCOUNTS}/${unknownId}/totp/reset`, { current_password: ADMIN_PASSWORD })).status,
    ).toBe(404);
    expect(
      (
        await call(
          `${ACCOUNTS}/${unknownId}`,
          { status: 'disabled', current_password: ADMIN_PASSWORD },
          'PATCH',
        )
      ).status,
    ).toBe(404);
  });
});
