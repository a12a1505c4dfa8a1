// TOTP with re-authentication, the QR code, recovery codes, the "already used" answer for a replayed code,
// and the notices and events they cause (docs/DESIGN.md 10, docs/ACCOUNTS.md).
import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountKey } from '#lib/accounts/repository.ts';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const totpAt = (secret: string, date: Date) => generate({ secret, epoch: Math.floor(date.getTime() / 1000) });

async function loginChallenge(
  h: ReturnType<typeof authHarness>,
  user: { username: string; password: string },
) {
  const login = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
  expect(login.body.data.totp_required).toBe(true);
  return login.body.data.challenge_token as string;
}

describe('TOTP setup needs the password', () => {
  it('refuses setup with a stolen session alone: missing or wrong password is 400 naming password', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    // Act
    const missing = await h.call('POST', '/auth/totp/setup', {}, { token: user.token });
    const wrong = await h.call(
      'POST',
      '/auth/totp/setup',
      { password: 'attacker-guess' },
      { token: user.token },
    );
    // Assess
    for (const answer of [missing, wrong]) {
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^password:/);
    }
    expect((await h.table.get(accountKey(user.id)))?.totp_pending_enc).toBeUndefined();
  });

  it('answers the secret, its otpauth link and a QR code of the link with the right password', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const setup = await h.call(
      'POST',
      '/auth/totp/setup',
      { password: user.password },
      { token: user.token },
    );
    expect(setup.status).toBe(200);
    expect(Object.keys(setup.body.data).sort()).toEqual(['qr_data_url', 'secret', 'uri']);
    const { qr_data_url: qr } = setup.body.data;
    expect(qr.startsWith('data:image/svg+xml;base64,')).toBe(true);
    const svg = Buffer.from(qr.split(',')[1], 'base64').toString('utf8');
    expect(svg).toMatch(/^<svg /);
    expect(svg).toMatch(/<\/svg>$/);
  });
});

describe('recovery codes', () => {
  it('are shown once by enable (10 codes xxxxx-xxxxx), stored only as digests, and counted in security', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const { recoveryCodes } = await h.enableTotp(user, clock);
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const digests = (await h.table.get(accountKey(user.id)))?.recovery_code_digests as Set<string>;
    expect(digests.size).toBe(10);
    const stored = JSON.stringify([...digests]);
    for (const code of recoveryCodes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replace('-', ''));
    }
    const security = await h.call('GET', '/auth/security', undefined, { token: user.token });
    expect(security.body.data).toMatchObject({ totp_enabled: true, recovery_codes_remaining: 10 });
    expect(security.raw).not.toContain(recoveryCodes[0]);
    const me = await h.call('GET', '/auth/me', undefined, { token: user.token });
    expect(me.raw).not.toMatch(/recovery|digest/);
  });

  it('log in once each at /auth/totp/verify, hyphen and case optional, and the owner is told', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const { recoveryCodes } = await h.enableTotp(user, clock);
    const [first, second] = recoveryCodes as [string, string];
    const ip = '198.51.100.23';
    const verified = await h.call(
      'POST',
      '/auth/totp/verify',
      { challenge_token: await loginChallenge(h, user), code: first.replace('-', '').toUpperCase() },
      { ip },
    );
    expect(verified.status).toBe(200);
    expect(verified.body.data.token_type).toBe('Bearer');
    const again = await h.call('POST', '/auth/totp/verify', {
      challenge_token: await loginChallenge(h, user),
      code: first,
    });
    expect(again.status).toBe(401);
    expect(again.raw).not.toContain(first);
    expect(
      (
        await h.call('POST', '/auth/totp/verify', {
          challenge_token: await loginChallenge(h, user),
          code: second,
        })
      ).status,
    ).toBe(200);
    const security = await h.call('GET', '/auth/security', undefined, { token: verified.body.data.token });
    expect(security.body.data.recovery_codes_remaining).toBe(8);
    const notices = h.mail.to(user.email).filter((mail) => /recovery code was used/i.test(mail.subject));
    expect(notices).toHaveLength(2);
    expect(notices[0]!.text).toContain(ip);
    expect(notices[0]!.text).toContain('9 unused');
    const events = await h.call('GET', '/auth/security/events', undefined, {
      token: verified.body.data.token,
    });
    expect(
      events.body.data.items.filter((event: { type: string }) => event.type === 'recovery_code_used'),
    ).toHaveLength(2);
  });

  it('log in exactly once when 50 requests race with one code on 50 challenges', async () => {
    // Prepare: the per-account TOTP throttle opened wide, so the single-use rule alone decides.
    const clock = movableClock();
    const h = authHarness({ clock, limits: { totpLogin: { perMinute: 1000, burst: 100 } } });
    const user = await h.registerUser();
    const { recoveryCodes } = await h.enableTotp(user, clock);
    // One after another: more than 10 logins of one account in flight at once are asked to wait.
    const challenges: string[] = [];
    for (let n = 0; n < 50; n++) challenges.push(await loginChallenge(h, user));
    // Act
    const answers = await Promise.all(
      challenges.map((challenge_token) =>
        h.call('POST', '/auth/totp/verify', { challenge_token, code: recoveryCodes[0] }),
      ),
    );
    // Assess
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(49);
    expect((await h.accounts.repository.get(user.id))?.recovery_code_digests?.size).toBe(9);
  });

  it('are replaced by a new set with the password; the old set stops working', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const { recoveryCodes: old } = await h.enableTotp(user, clock);
    const refused = await h.call(
      'POST',
      '/auth/totp/recovery-codes',
      { password: 'wrong-one-x' },
      { token: user.token },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^password:/);
    const renewed = await h.call(
      'POST',
      '/auth/totp/recovery-codes',
      { password: user.password },
      { token: user.token },
    );
    expect(renewed.status).toBe(200);
    const fresh = renewed.body.data.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh.some((code) => old.includes(code))).toBe(false);
    expect(
      (
        await h.call('POST', '/auth/totp/verify', {
          challenge_token: await loginChallenge(h, user),
          code: old[0],
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await h.call('POST', '/auth/totp/verify', {
          challenge_token: await loginChallenge(h, user),
          code: fresh[0],
        })
      ).status,
    ).toBe(200);
    expect(h.mail.to(user.email).some((mail) => /New recovery codes/.test(mail.subject))).toBe(true);
  });

  it('cannot be made without TOTP, and go away when TOTP is turned off', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    expect(
      (await h.call('POST', '/auth/totp/recovery-codes', { password: user.password }, { token: user.token }))
        .status,
    ).toBe(409);
    await h.enableTotp(user, clock);
    expect(
      (await h.call('POST', '/auth/totp/disable', { password: user.password }, { token: user.token })).status,
    ).toBe(200);
    expect((await h.table.get(accountKey(user.id)))?.recovery_code_digests).toBeUndefined();
    const security = await h.call('GET', '/auth/security', undefined, { token: user.token });
    expect(security.body.data).toMatchObject({ totp_enabled: false, recovery_codes_remaining: 0 });
  });
});

describe('replayed TOTP codes', () => {
  it('says the code that turned TOTP on was already used at the next login, in its window or long past it', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const { secret } = await h.enableTotp(user, clock);
    const code = await totpAt(secret, clock());
    // A newcomer logs out and back in with the code they just typed: seconds later, then past the drift.
    for (const later of [5_000, 90_000]) {
      clock.advance(later);
      const answer = await h.call('POST', '/auth/totp/verify', {
        challenge_token: await loginChallenge(h, user),
        code,
      });
      expect(answer.status).toBe(401);
      expect(answer.body.message).toBe('code: was already used; wait for the next code');
    }
  });

  it('says the code was already used when disabling with the code just used to log in', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    const { secret } = await h.enableTotp(user, clock);
    clock.advance(30_000);
    const code = await totpAt(secret, clock());
    const session = await h.call('POST', '/auth/totp/verify', {
      challenge_token: await loginChallenge(h, user),
      code,
    });
    expect(session.status).toBe(200);
    const replayed = await h.call('POST', '/auth/totp/disable', { code }, { token: session.body.data.token });
    expect(replayed.status).toBe(400);
    expect(replayed.body.message).toMatch(/^code: was already used/);
    const atLogin = await h.call('POST', '/auth/totp/verify', {
      challenge_token: await loginChallenge(h, user),
      code,
    });
    expect(atLogin.status).toBe(401);
    expect(atLogin.body.message).toMatch(/^code: was already used/);
    const wrong = code === '000000' ? '111111' : '000000';
    expect(
      (await h.call('POST', '/auth/totp/disable', { code: wrong }, { token: session.body.data.token })).body
        .message,
    ).toBe('code: is invalid');
  });
});

describe('TOTP notices and events', () => {
  it('mail the owner when TOTP is turned on and off, naming the time and source address', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    await h.enableTotp(user, clock);
    await h.call(
      'POST',
      '/auth/totp/disable',
      { password: user.password },
      { token: user.token, ip: '192.0.2.77' },
    );
    const subjects = h.mail.to(user.email).map((mail) => mail.subject);
    expect(subjects).toContain('Two-step verification was turned on');
    expect(subjects).toContain('Two-step verification was turned off');
    const off = h.mail.to(user.email).find((mail) => mail.subject.endsWith('turned off'))!;
    expect(off.text).toContain('192.0.2.77');
    expect(off.text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: user.token });
    const types = events.body.data.items.map((event: { type: string }) => event.type);
    expect(types.slice(0, 2)).toEqual(['totp_disabled', 'totp_enabled']);
    expect(events.body.data.items[0].ip).toBe('192.0.2.77');
  });
});
