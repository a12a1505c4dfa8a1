// An owner always gets back in (docs/ACCOUNTS.md "Password reset by code or link", "Passkeys", "Residual
// risks"): whoever keeps an account's password guard closed by guessing cannot keep out an owner who reads
// their mail, because a completed reset signs the owner in with a new device token and clears the guard;
// passkey logins are never held by password failures and a refused assertion is no guess; and a reset
// removes every passkey, an intruder's among them.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { authHarness, type CallResult, movableClock } from '#test/support/accounts.ts';
import { captureLog } from '#test/support/mail.ts';
import { addPasskey, passkeyLogin, stranger } from '#test/support/passkeys.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { SoftAuthenticator } from '#test/support/webauthn.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;

const addressN = (n: number) => `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The reset links mailed to `to`, oldest first, as their tokens. */
const linksTo = (h: Harness, to: string): string[] =>
  h.mail.to(to).flatMap((mail) => {
    const found = /\/#\/reset\?token=([A-Za-z0-9_-]{43})/.exec(mail.text ?? '');
    return found ? [found[1]!] : [];
  });

async function resetByCode(h: Harness, email: string, new_password: string) {
  expect((await h.call('POST', '/auth/password/reset/code', { email })).status).toBe(200);
  return h.call('POST', '/auth/password/reset', { email, code: h.mail.codeFor(email), new_password });
}

/** An assertion signed by a key the service never saw, naming the real credential id it was offered. */
async function forgedAssertion(h: Harness, username: string) {
  const options = await h.call('POST', '/auth/passkeys/login/options', { username });
  const [offered] = options.body.data.allowCredentials as Array<{ id: string }>;
  const response = stranger().authenticate({ ...options.body.data, allowCredentials: [] });
  return { ...response, id: offered!.id, rawId: offered!.id };
}

describe('the lockout run: an attacker guessing while the owner resets and logs in', () => {
  it('lets the owner in by password from a new browser and by passkey, while one guess every 2 s for 4 minutes is refused', async () => {
    // Prepare: an owner with a passkey; an attacker who knows the username.
    const clock = movableClock();
    const h = authHarness({ clock });
    const owner = await h.registerUser();
    const phone = new SoftAuthenticator();
    await addPasskey(h, owner, phone);
    const attacker: number[] = [];
    const guess = async (n: number) => {
      const answer = await h.call(
        'POST',
        '/auth/login',
        { username: n % 2 ? owner.username : owner.email, password: `guess-${n}` },
        { ip: addressN(n) },
      );
      attacker.push(answer.status);
    };
    const newBrowser = () =>
      h.call('POST', '/auth/login', { username: owner.username, password: 'owner-new-pw-1' });
    const steps: Record<string, number> = {};
    let resetAnswer: CallResult<{ token: string; device_token: string }> | undefined;
    let session = '';
    const renewedPhone = new SoftAuthenticator();

    // Act: ten wrong logins, then one every 2 s for 4 simulated minutes; the owner acts in between.
    for (let n = 0; n < 10; n++) await guess(n);
    for (let n = 10; n < 130; n++) {
      clock.advance(2000);
      await guess(n);
      if (n === 12)
        steps.passkeyWhileLocked = (await passkeyLogin(h, phone, { username: owner.username })).status;
      if (n === 15) {
        steps.withoutTokenBeforeReset = (
          await h.call('POST', '/auth/login', { username: owner.username, password: owner.password })
        ).status;
        steps.resetCode = (await h.call('POST', '/auth/password/reset/code', { email: owner.email })).status;
      }
      if (n === 20) {
        resetAnswer = await h.call('POST', '/auth/password/reset', {
          email: owner.email,
          code: h.mail.codeFor(owner.email),
          new_password: 'owner-new-pw-1',
        });
        session = resetAnswer.body.data.token;
      }
      // The reset removed every passkey: the owner adds the phone's again with the reset's session.
      if (n === 25) await addPasskey(h, { token: session, password: 'owner-new-pw-1' }, renewedPhone);
      if (n === 60) steps.newBrowserAfterReset = (await newBrowser()).status;
      if (n === 61) {
        const login = await h.call('POST', '/auth/login', {
          username: owner.email,
          password: 'owner-new-pw-1',
          device_token: resetAnswer!.body.data.device_token,
        });
        steps.withResetToken = login.status;
        steps.tokenRenewed = TOKEN_SHAPE.test(login.body.data.device_token) ? 1 : 0;
      }
      if (n === 62) steps.passkeyAfterReset = (await passkeyLogin(h, renewedPhone)).status;
      if (n === 63) steps.oldPasskey = (await passkeyLogin(h, phone)).status;
    }

    // Assess: the reset signed the owner in with a session and a new device token.
    expect(resetAnswer!.status, resetAnswer!.raw).toBe(200);
    expect(resetAnswer!.body.data).toMatchObject({
      token_type: 'Bearer',
      device_token: expect.stringMatching(TOKEN_SHAPE),
      user: { id: owner.id },
    });
    expect((await h.call('GET', '/auth/me', undefined, { token: session })).status).toBe(200);
    expect(steps).toEqual({
      passkeyWhileLocked: 200,
      withoutTokenBeforeReset: 429,
      resetCode: 200,
      // The attacker closed the guard again after the reset cleared it: a browser without a token waits,
      newBrowserAfterReset: 429,
      // the reset's device token does not,
      withResetToken: 200,
      tokenRenewed: 1,
      // nor does a passkey; the passkey held before the reset was removed by it.
      passkeyAfterReset: 200,
      oldPasskey: 401,
    });
    // The attacker never got in: 10 guesses evaluated before the reset, 10 after it cleared the guard,
    // then one per back-off (1, then 2 minutes), and every other guess refused unevaluated.
    expect(attacker).toHaveLength(130);
    expect(attacker.every((status) => status === 401 || status === 429)).toBe(true);
    expect(attacker.filter((status) => status === 401)).toHaveLength(22);
    expect(attacker.at(-1)).toBe(429);
  });

  it("signs in through the second-factor step after a reset by link of an account with TOTP, whatever a thief spent of the account's budget, with a device token the locked guard lets by", async () => {
    // Prepare: TOTP on; a thief with the old password spends the account's second-factor budget; the
    // guard locked by ten wrong logins.
    const clock = movableClock();
    const h = authHarness({ clock, limits: { totpLogin: { perMinute: 60, burst: 60, perDay: 6 } } });
    const owner = await h.registerUser();
    const { secret } = await h.enableTotp(owner, clock);
    const thief: number[] = [];
    for (let n = 0; n < 4; n++) {
      const login = await h.call('POST', '/auth/login', {
        username: owner.username,
        password: owner.password,
      });
      for (const code of ['000000', '111111']) {
        const challenge_token = login.body.data.challenge_token;
        thief.push((await h.call('POST', '/auth/totp/verify', { challenge_token, code })).status);
      }
    }
    expect(thief).toContain(429);
    await h.call('POST', '/auth/password/reset/code', { email: owner.email });
    for (let n = 0; n < 10; n++) {
      await h.call(
        'POST',
        '/auth/login',
        { username: owner.username, password: `x-${n}` },
        { ip: addressN(n) },
      );
    }
    // Act: the link resets and answers the challenge, which a TOTP code finishes.
    const reset = await h.call('POST', '/auth/password/reset', {
      token: linksTo(h, owner.email).at(-1),
      new_password: 'owner-new-pw-1',
    });
    expect(reset.status, reset.raw).toBe(200);
    expect(reset.body.data).toMatchObject({ totp_required: true, methods: ['totp', 'recovery_code'] });
    expect(reset.body.data.token).toBeUndefined();
    const { generate } = await import('otplib');
    clock.advance(30_000);
    const code = await generate({ secret, epoch: Math.floor(clock().getTime() / 1000) });
    const session = await h.call('POST', '/auth/totp/verify', {
      challenge_token: reset.body.data.challenge_token,
      code,
    });
    // The attacker locks the guard again.
    for (let n = 0; n < 11; n++) {
      await h.call(
        'POST',
        '/auth/login',
        { username: owner.username, password: `y-${n}` },
        { ip: addressN(n) },
      );
    }
    const login = await h.call('POST', '/auth/login', {
      username: owner.username,
      password: 'owner-new-pw-1',
      device_token: session.body.data.device_token,
    });
    const without = await h.call('POST', '/auth/login', {
      username: owner.username,
      password: 'owner-new-pw-1',
    });
    // Assess
    expect(session.status, session.raw).toBe(200);
    expect(session.body.data.device_token).toMatch(TOKEN_SHAPE);
    expect(login.status).toBe(200);
    expect(login.body.data.totp_required).toBe(true);
    expect(without.status).toBe(429);
  });

  it('clears the guard with the reset: the next login without a token is evaluated', async () => {
    const h = authHarness();
    const owner = await h.registerUser();
    for (let n = 0; n < 11; n++) {
      await h.call(
        'POST',
        '/auth/login',
        { username: owner.username, password: `x-${n}` },
        { ip: addressN(n) },
      );
    }
    const reset = await resetByCode(h, owner.email, 'owner-new-pw-1');
    expect(reset.status).toBe(200);
    const events = await h.call('GET', '/auth/security/events', undefined, { token: reset.body.data.token });
    expect(events.body.data.items[0]).toMatchObject({ type: 'login', method: 'password_reset' });
    const login = await h.call('POST', '/auth/login', { username: owner.email, password: 'owner-new-pw-1' });
    expect(login.status).toBe(200);
  });
});

describe('passkeys against guessing', () => {
  it('refuses a dozen forged assertions naming a real credential id with 401, holding neither the password nor the real passkey', async () => {
    // Prepare
    const h = authHarness();
    const owner = await h.registerUser();
    const phone = new SoftAuthenticator();
    await addPasskey(h, owner, phone);
    // Act
    const forged = [];
    for (let n = 0; n < 12; n++) {
      const response = await forgedAssertion(h, owner.username);
      expect(response.id).toBe(phone.credentials[0]!.id.toString('base64url'));
      forged.push(
        (await h.call('POST', '/auth/passkeys/login/verify', { response }, { ip: addressN(n) })).status,
      );
    }
    const password = await h.call('POST', '/auth/login', {
      username: owner.username,
      password: owner.password,
    });
    const passkey = await passkeyLogin(h, phone, { username: owner.username });
    // Assess
    expect(forged).toEqual(Array(12).fill(401));
    expect(password.status).toBe(200);
    expect(passkey.status).toBe(200);
  });

  it('lets the real passkey in while wrong passwords hold the guard, and forged assertions meanwhile are 401, never 429', async () => {
    const h = authHarness();
    const owner = await h.registerUser();
    const phone = new SoftAuthenticator();
    await addPasskey(h, owner, phone);
    for (let n = 0; n < 10; n++) {
      await h.call(
        'POST',
        '/auth/login',
        { username: owner.username, password: `x-${n}` },
        { ip: addressN(n) },
      );
    }
    const forged = await h.call('POST', '/auth/passkeys/login/verify', {
      response: await forgedAssertion(h, owner.username),
    });
    const byName = await passkeyLogin(h, phone, { username: owner.username });
    const discoverable = await passkeyLogin(h, phone);
    const password = await h.call('POST', '/auth/login', {
      username: owner.username,
      password: owner.password,
    });
    expect(forged.status).toBe(401);
    expect(byName.status).toBe(200);
    expect(discoverable.status).toBe(200);
    // The passkey logins did not open the guard for whoever is guessing.
    expect(password.status).toBe(429);
  });
});

describe('a reset removes the passkeys', () => {
  it("refuses an intruder's passkey after the owner's reset; the account lists none, and the mail says so", async () => {
    // Prepare: an intruder with a stolen session and the password adds a passkey; so does the owner.
    const h = authHarness();
    const owner = await h.registerUser();
    const intruder = new SoftAuthenticator();
    const phone = new SoftAuthenticator();
    await addPasskey(h, owner, intruder, 'Not mine');
    await addPasskey(h, owner, phone);
    expect((await passkeyLogin(h, intruder, { username: owner.username })).status).toBe(200);
    // The intruder starts adding a second one before the reset.
    const pending = await h.call(
      'POST',
      '/auth/passkeys/register/options',
      { password: owner.password },
      { token: owner.token },
    );
    const before = await h.accounts.repository.get(owner.id);
    // Act
    const reset = await resetByCode(h, owner.email, 'owner-new-pw-1');
    const response = intruder.register(pending.body.data);
    const late = await h.call('POST', '/auth/passkeys/register/verify', { response }, { token: owner.token });
    // A registration that checked the session just before the reset and writes just after it.
    const raced = h.accounts.passkeys.registerVerify(before!, { response }, { ip: '', userAgent: '' });
    // Assess
    expect(reset.status).toBe(200);
    const session = reset.body.data.token as string;
    expect(late.status).toBe(401);
    await expect(raced).rejects.toMatchObject({ message: 'Session is invalid or expired' });
    expect((await passkeyLogin(h, intruder, { username: owner.username })).status).toBe(401);
    expect((await passkeyLogin(h, intruder)).status).toBe(401);
    expect((await passkeyLogin(h, phone)).status).toBe(401);
    expect((await h.call('GET', '/auth/passkeys', undefined, { token: session })).body.data).toEqual([]);
    expect((await h.call('GET', '/auth/security', undefined, { token: session })).body.data.passkeys).toBe(0);
    const options = await h.call('POST', '/auth/passkeys/login/options', { username: owner.username });
    expect(options.body.data.allowCredentials).toEqual([]);
    const notice = h.mail.to(owner.email).find((mail) => mail.subject === 'Your password was reset');
    expect(notice?.text).toMatch(/every passkey was removed/);
    const codeMail = h.mail.to(owner.email).find((mail) => mail.subject === 'Your password reset code');
    expect(codeMail?.text).toMatch(/removes every passkey/);
    // The owner adds passkeys again as usual.
    await addPasskey(h, { token: session, password: 'owner-new-pw-1' }, new SoftAuthenticator());
  });

  it('never keeps a passkey registered concurrently with the reset', async () => {
    const h = authHarness();
    const owner = await h.registerUser();
    const intruder = new SoftAuthenticator();
    const options = await h.call(
      'POST',
      '/auth/passkeys/register/options',
      { password: owner.password },
      { token: owner.token },
    );
    await h.call('POST', '/auth/password/reset/code', { email: owner.email });
    const [registered, reset] = await Promise.all([
      h.call(
        'POST',
        '/auth/passkeys/register/verify',
        { response: intruder.register(options.body.data) },
        { token: owner.token },
      ),
      h.call('POST', '/auth/password/reset', {
        email: owner.email,
        code: h.mail.codeFor(owner.email),
        new_password: 'owner-new-pw-1',
      }),
    ]);
    expect(reset.status, reset.raw).toBe(200);
    expect([201, 401]).toContain(registered.status);
    expect((await passkeyLogin(h, intruder)).status).toBe(401);
    const listed = await h.call('GET', '/auth/passkeys', undefined, { token: reset.body.data.token });
    expect(listed.body.data).toEqual([]);
    expect((await h.accounts.repository.get(owner.id))?.passkey_count ?? 0).toBe(0);
  });

  it('removes a passkey added after the reset listed the passkeys and before it wrote', async () => {
    // Prepare: the intruder's registration lands just before the reset's transaction.
    const h = authHarness();
    const owner = await h.registerUser();
    const intruder = new SoftAuthenticator();
    const transact = h.table.transact.bind(h.table);
    let raced = false;
    const spy = vi.spyOn(h.table, 'transact').mockImplementation(async (items) => {
      if (!raced && items.some((item) => item.Update?.UpdateExpression?.includes('device_epoch'))) {
        raced = true;
        await addPasskey(h, owner, intruder);
      }
      return transact(items);
    });
    // Act
    let reset: CallResult<{ token: string }>;
    try {
      reset = await resetByCode(h, owner.email, 'owner-new-pw-1');
    } finally {
      spy.mockRestore();
    }
    // Assess
    expect(raced).toBe(true);
    expect(reset.status, reset.raw).toBe(200);
    expect((await passkeyLogin(h, intruder)).status).toBe(401);
    const listed = await h.call('GET', '/auth/passkeys', undefined, { token: reset.body.data.token });
    expect(listed.body.data).toEqual([]);
  });
});

describe('a reset under concurrency', () => {
  it('signs in once when 10 submissions of one code race: one session, nine refusals', async () => {
    const h = authHarness();
    const owner = await h.registerUser();
    const phone = new SoftAuthenticator();
    await addPasskey(h, owner, phone);
    await h.call('POST', '/auth/password/reset/code', { email: owner.email });
    const code = h.mail.codeFor(owner.email);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        h.call('POST', '/auth/password/reset', { email: owner.email, code, new_password: `raced-pw-${n}` }),
      ),
    );
    const won = answers.filter((answer) => answer.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 400)).toHaveLength(9);
    expect((await h.call('GET', '/auth/me', undefined, { token: won[0]!.body.data.token })).status).toBe(200);
    const account = await h.accounts.repository.get(owner.id);
    expect(account).toMatchObject({ session_epoch: 1, device_epoch: 1, token_epoch: 1 });
    expect(account?.passkey_count).toBeUndefined();
  });
});

describe('a reset of an account without API tokens', () => {
  it('logs no error or warning', async () => {
    const h = authHarness();
    const owner = await h.registerUser();
    const log = captureLog();
    let reset: Awaited<ReturnType<Harness['call']>>;
    try {
      reset = await resetByCode(h, owner.email, 'owner-new-pw-1');
    } finally {
      log.stop();
    }
    expect(reset.status).toBe(200);
    const loud = log.lines
      .map((line) => JSON.parse(line) as { level: string; message: string })
      .filter((line) => line.level === 'warn' || line.level === 'error');
    expect(loud).toEqual([]);
  });
});
