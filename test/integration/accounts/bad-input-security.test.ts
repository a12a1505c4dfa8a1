// Bad input to the endpoints of docs/DESIGN.md 10: malformed bodies, wrong types and over-long strings are a
// 400 naming the field (or the body), never a 5xx, and change nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { accountKey } from '#lib/accounts/repository.ts';
import { authHarness } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const long = 'x'.repeat(129);

describe('bad input to the security endpoints', () => {
  it('names the offending field with a 400', async () => {
    // Prepare: a user with TOTP on, and an administrator.
    const h = authHarness();
    const user = await h.registerUser();
    await h.enableTotp(user);
    const adminAccount = await h.accounts.repository.create({
      username: `adm_${Date.now()}`,
      email: null,
      emailVerified: false,
      role: 'admin',
      passwordHash: (await h.accounts.repository.get(user.id))!.password_hash,
    });
    const admin = (await h.sessions.issue(adminAccount)).token;
    const before = JSON.stringify(await h.table.get(accountKey(user.id)));
    const cases: Array<[string, string, unknown, string, string]> = [
      ['POST', '/auth/totp/setup', { password: 7 }, 'password', user.token],
      ['POST', '/auth/totp/recovery-codes', {}, 'password', user.token],
      ['POST', '/auth/totp/recovery-codes', { password: ['a'] }, 'password', user.token],
      ['POST', '/api/v1/auth/totp/recovery-codes', { password: long }, 'password', user.token],
      ['POST', '/auth/totp/verify', { challenge_token: 'x', code: 'abcde-fgh1' }, 'code', ''],
      ['POST', '/auth/totp/verify', { challenge_token: 'x', code: 'abcde-fgh23-' }, 'code', ''],
      ['POST', '/auth/totp/verify', { challenge_token: 'x', code: 1234567890 }, 'code', ''],
      [
        'POST',
        '/auth/email/verify',
        { email: 'a@b.test', code: '123456', password: null },
        'password',
        user.token,
      ],
      [
        'POST',
        '/auth/email/verify',
        { email: 'a@b.test', code: '123456', password: long },
        'password',
        user.token,
      ],
      [
        'POST',
        '/api/v1/admin/accounts',
        { username: 'okname', email: 'a@b.test', password: 'long enough', current_password: 12 },
        'current_password',
        admin,
      ],
      [
        'POST',
        '/api/v1/admin/accounts',
        { username: 'okname', email: 'a@b.test', password: 'long enough', current_password: long },
        'current_password',
        admin,
      ],
      ['PATCH', `/api/v1/admin/accounts/${user.id}`, { status: 'DISABLED' }, 'status', admin],
      ['PATCH', `/api/v1/admin/accounts/${user.id}`, { status: 'x'.repeat(5000) }, 'status', admin],
      ['GET', '/api/v1/admin/accounts?limit=-1', undefined, 'query.limit', admin],
      ['GET', `/api/v1/admin/accounts?cursor=${'A'.repeat(3000)}`, undefined, 'query.cursor', admin],
      ['GET', '/auth/security/events?limit=1000', undefined, 'query.limit', user.token],
      ['GET', '/auth/security/events?cursor=not-a-cursor', undefined, 'query.cursor', user.token],
    ];
    // Act + Assess
    for (const [method, path, body, field, token] of cases) {
      const answer = await h.call(method, path, body, token ? { token } : {});
      const label = `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`;
      expect(answer.status, label).toBe(400);
      expect(answer.body.message.startsWith(`${field}:`), `${label}: ${answer.body.message}`).toBe(true);
    }
    expect(JSON.stringify(await h.table.get(accountKey(user.id)))).toBe(before);
  });

  it('answers malformed and non-object bodies 400, and ignores unknown fields', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    for (const path of ['/auth/totp/setup', '/auth/sessions/revoke-others', '/auth/totp/recovery-codes']) {
      for (const raw of ['{"password":', '[1,2]', '"text"', 'null']) {
        const answer = await h.handler(
          apiEvent({
            method: 'POST',
            path,
            body: raw,
            headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
          }),
          lambdaContext,
        );
        expect(answer.statusCode, `${path} ${raw}`).toBe(400);
      }
    }
    const ignored = await h.call(
      'POST',
      '/auth/sessions/revoke-others',
      { everything: true },
      { token: user.token },
    );
    expect(ignored.status).toBe(200);
  });
});
