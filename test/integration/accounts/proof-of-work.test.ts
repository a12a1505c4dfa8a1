// Proof of work (docs/ACCOUNTS.md "Proof of work", docs/DESIGN.md 26) on DynamoDB Local: the verifier
// (a solution of ours passes once; a wrong number, a forged signature, an expired or replayed solution are
// refused, and of the same solution sent at once exactly one passes), then each protected request with
// `auth.challenge.required` on (400 naming `altcha` without a solution, done with one, refused when
// replayed), Turnstile through a fake verifier on 127.0.0.1, and the same requests with it off.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { solveChallenge } from 'altcha-lib/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authHarness, createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { shareHarness } from '../files/share-helpers.ts';

const REQUIRED = { required: true, max_number: 2000, expires_seconds: 300 };
const clock = movableClock();
const h = authHarness({ clock, challenge: REQUIRED });

interface ChallengeView {
  algorithm: string;
  challenge: string;
  salt: string;
  signature: string;
  maxnumber: number;
}

/** What ALTCHA's widget does: fetch a challenge, find its number, submit the base64 JSON payload. */
async function solved(call = h.call, change: Partial<Record<string, unknown>> = {}): Promise<string> {
  const answer = await call<ChallengeView>('GET', '/api/v1/challenge');
  expect(answer.status).toBe(200);
  const { algorithm, challenge, salt, signature, maxnumber } = answer.body.data;
  const solution = await solveChallenge(challenge, salt, algorithm, maxnumber).promise;
  const payload = { algorithm, challenge, number: solution?.number, salt, signature, ...change };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

function expectAltchaRefused(answer: { status: number; body: { message: string; data: unknown } }) {
  expect(answer.status).toBe(400);
  expect(answer.body.message).toMatch(/^altcha: /);
  expect(answer.body.data).toMatchObject({ fields: [{ field: 'altcha' }] });
}

beforeAll(async () => {
  await provisionTestStack();
});

describe('the verifier', () => {
  const check = (solution: string | undefined) => h.accounts.proofOfWork.check(solution, '203.0.113.7');

  it("answers ALTCHA's classic challenge, signed, with its expiry in the salt and the difficulty set", async () => {
    const answer = await h.call('GET', '/api/v1/challenge');
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({
      algorithm: 'SHA-256',
      maxnumber: 2000,
      required: true,
      provider: 'altcha',
      site_key: null,
    });
    expect(answer.body.data.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(answer.body.data.signature).toMatch(/^[0-9a-f]{64}$/);
    const expires = Number(new URLSearchParams(answer.body.data.salt.split('?')[1]).get('expires'));
    expect(expires).toBe(Math.floor(clock().getTime() / 1000) + 300);
  });

  it('passes a solution once, then refuses it as used', async () => {
    const solution = await solved();
    await expect(check(solution)).resolves.toBeUndefined();
    await expect(check(solution)).rejects.toThrow(/^altcha: was used already/);
  });

  it('refuses a wrong number, a forged signature, garbage and nothing', async () => {
    const answer = await h.call<ChallengeView>('GET', '/api/v1/challenge');
    const { algorithm, challenge, salt, signature, maxnumber } = answer.body.data;
    const right = (await solveChallenge(challenge, salt, algorithm, maxnumber).promise)?.number ?? 0;
    const payload = (change: object) =>
      Buffer.from(
        JSON.stringify({ algorithm, challenge, number: right, salt, signature, ...change }),
      ).toString('base64');
    await expect(check(payload({ number: right + 1 }))).rejects.toThrow(/^altcha: does not solve/);
    await expect(check(payload({ signature: 'f'.repeat(64) }))).rejects.toThrow(/^altcha: does not solve/);
    // A later expiry written into the salt breaks the signature.
    const longer = salt.replace(/expires=\d+/, 'expires=9999999999');
    await expect(check(payload({ salt: longer }))).rejects.toThrow(/^altcha: does not solve/);
    await expect(check('not base64 json')).rejects.toThrow(/^altcha: does not solve/);
    await expect(check(undefined)).rejects.toThrow(/^altcha: is required/);
    // The genuine one still passes: nothing above used it up.
    await expect(check(payload({}))).resolves.toBeUndefined();
  });

  it('refuses a solution past its expiry', async () => {
    const solution = await solved();
    clock.advance(301_000);
    await expect(check(solution)).rejects.toThrow(/^altcha: has expired/);
  });

  it('lets exactly one of the same solution sent at once through', async () => {
    const solution = await solved();
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => check(solution)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('registration and reset codes with the challenge required', () => {
  it('refuses a code send without a solution (400 naming altcha, nothing mailed), then registers with one', async () => {
    const email = `pow-${unique()}@example.test`;
    expectAltchaRefused(await h.call('POST', '/auth/register/code', { email }));
    expectAltchaRefused(await h.call('POST', '/api/v1/auth/register/code', { email, altcha: 'bad' }));
    expect(h.mail.to(email)).toHaveLength(0);
    const sent = await h.call('POST', '/auth/register/code', { email, altcha: await solved() });
    expect(sent.status).toBe(200);
    const code = h.mail.codeFor(email);
    const body = { username: `pow_${unique()}`, email, code, password: 'pw-12345678' };
    expectAltchaRefused(await h.call('POST', '/auth/register', body));
    const altcha = await solved();
    const registered = await h.call('POST', '/api/v1/auth/register', { ...body, altcha });
    expect(registered.status).toBe(201);
    expect(registered.body.data).toMatchObject({ username: body.username, email });
    // The same solution again: refused before anything else is looked at.
    expectAltchaRefused(await h.call('POST', '/auth/register', { ...body, altcha }));
  });

  it('of the same solved registration sent at once, one is checked further, the rest are 400 naming altcha', async () => {
    const email = `pow-${unique()}@example.test`;
    const altcha = await solved();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h.call('POST', '/auth/register/code', { email, altcha })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((one) => one.status !== 200)) expectAltchaRefused(answer);
    expect(h.mail.to(email)).toHaveLength(1);
  });

  it('refuses a reset-code send without a solution and sends one with it', async () => {
    const user = await createTestAccount();
    const email = user.account.email ?? '';
    expectAltchaRefused(await h.call('POST', '/auth/password/reset/code', { email }));
    expect(h.mail.to(email)).toHaveLength(0);
    const sent = await h.call('POST', '/auth/password/reset/code', { email, altcha: await solved() });
    expect(sent.status).toBe(200);
    expect(h.mail.to(email)).toHaveLength(1);
  });
});

describe('share passwords and reports with the challenge required', () => {
  const shareClock = movableClock();
  const deps = testDeps({ clock: shareClock, challenge: REQUIRED });
  const { call, upload, share, open } = shareHarness(deps, shareClock);
  // The challenge comes from the accounts group, over the same table and key.
  const accounts = authHarness({ clock: shareClock, challenge: REQUIRED });
  const solve = () => solved(accounts.call);
  let owner: TestAccount;

  beforeAll(async () => {
    owner = await createTestAccount();
  });

  it('opens a password share only with a solution; one without a password needs none', async () => {
    const file = await upload(owner);
    const locked = await share(owner, { file_id: file.id, password: 'share-pass-1' });
    expectAltchaRefused(await open(locked.id, { password: 'share-pass-1' }));
    const altcha = await solve();
    expect((await open(locked.id, { password: 'share-pass-1', altcha })).status).toBe(200);
    expectAltchaRefused(await open(locked.id, { password: 'share-pass-1', altcha }));
    // A wrong password with a good solution is the usual 401.
    expect((await open(locked.id, { password: 'wrong', altcha: await solve() })).status).toBe(401);
    const plain = await share(owner, { file_id: file.id });
    expect((await open(plain.id)).status).toBe(200);
  });

  it("shows the page's form with ALTCHA's widget from this origin, and takes its `altcha` field", async () => {
    const file = await upload(owner);
    const locked = await share(owner, { file_id: file.id, password: 'share-pass-1' });
    const page = await call('shares', { path: `/s/${locked.id}` });
    expect(page.status).toBe(401);
    expect(page.text).toContain('<altcha-widget');
    expect(page.text).toContain('<input type="hidden" name="altcha">');
    expect(page.text).toMatch(/<script type="module" src="\/console\/[\w.-]+\.js"><\/script>/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const post = (body: string) =>
      call('shares', {
        method: 'POST',
        path: `/s/${locked.id}`,
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const unsolved = await post('password=share-pass-1');
    expect(unsolved.status).toBe(400);
    expect(unsolved.text).toContain('altcha: is required');
    const altcha = encodeURIComponent(await solve());
    expect((await post(`password=share-pass-1&altcha=${altcha}`)).status).toBe(200);
    expect((await post(`password=share-pass-1&altcha=${altcha}`)).status).toBe(400);
  });

  it('takes a report only with a solution', async () => {
    const file = await upload(owner);
    let reports = 0;
    const report = (body: object) =>
      call('shares', { method: 'POST', path: '/api/v1/reports', body, sourceIp: `198.51.100.${++reports}` });
    const body = { url: file.url, reason: 'spam' };
    expectAltchaRefused(await report(body));
    const altcha = await solve();
    expect((await report({ ...body, altcha })).status).toBe(202);
    expectAltchaRefused(await report({ ...body, altcha }));
  });
});

describe('Turnstile through its verifier', () => {
  const calls: URLSearchParams[] = [];
  const verifier = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      calls.push(form);
      const success = form.get('secret') === 'turnstile-secret' && form.get('response') === 'good-token';
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success, 'error-codes': success ? [] : ['invalid-input-response'] }));
    });
  });
  let turnstile: ReturnType<typeof authHarness>;

  beforeAll(async () => {
    await new Promise<void>((listening) => verifier.listen(0, '127.0.0.1', listening));
    const { port } = verifier.address() as AddressInfo;
    turnstile = authHarness({
      challenge: {
        required: true,
        provider: 'turnstile',
        turnstile: {
          site_key: 'turnstile-site',
          secret_key: 'turnstile-secret',
          verify_url: `http://127.0.0.1:${port}/siteverify`,
        },
      },
    });
  });
  afterAll(() => new Promise<void>((closed) => verifier.close(() => closed())));

  it('names the provider and site key, and sends a code only for a token the verifier accepts', async () => {
    const challenge = await turnstile.call('GET', '/api/v1/challenge');
    expect(challenge.body.data).toMatchObject({ provider: 'turnstile', site_key: 'turnstile-site' });
    const email = `ts-${unique()}@example.test`;
    expectAltchaRefused(await turnstile.call('POST', '/auth/register/code', { email }));
    expectAltchaRefused(await turnstile.call('POST', '/auth/register/code', { email, altcha: 'bad-token' }));
    const sent = await turnstile.call(
      'POST',
      '/auth/register/code',
      { email, altcha: 'good-token' },
      {
        ip: '192.0.2.44',
      },
    );
    expect(sent.status).toBe(200);
    expect(calls.at(-1)?.get('remoteip')).toBe('192.0.2.44');
    expect(turnstile.mail.to(email)).toHaveLength(1);
  });
});

describe('with the challenge not required', () => {
  const off = authHarness();

  it('registers as before, and accepts and ignores an `altcha` field', async () => {
    const challenge = await off.call('GET', '/api/v1/challenge');
    expect(challenge.body.data.required).toBe(false);
    const email = `off-${unique()}@example.test`;
    expect((await off.call('POST', '/auth/register/code', { email })).status).toBe(200);
    const code = off.mail.codeFor(email);
    const body = { username: `off_${unique()}`, email, code, password: 'pw-12345678', altcha: 'anything' };
    expect((await off.call('POST', '/auth/register', body)).status).toBe(201);
  });
});
