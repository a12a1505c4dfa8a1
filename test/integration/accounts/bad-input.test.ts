import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '#lib/platform/log.ts';
import { authHarness } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

const PUBLIC = [
  '/auth/register/code',
  '/auth/register',
  '/auth/login',
  '/admin/auth/login',
  '/auth/totp/verify',
  '/auth/password/reset/code',
  '/auth/password/reset',
];
const SESSION = [
  '/auth/totp/setup',
  '/auth/totp/enable',
  '/auth/totp/disable',
  '/auth/email/code',
  '/auth/email/verify',
  '/auth/email/unbind',
  '/auth/password',
  '/auth/logout',
];

describe('bad input', () => {
  it('names the offending field with a 400 for wrong types, missing fields and over-long strings', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const cases: Array<[string, unknown, string, boolean?]> = [
      ['/auth/register/code', { email: 'not-an-address' }, 'email'],
      ['/auth/register/code', { email: 42 }, 'email'],
      ['/auth/register/code', { email: `${'a'.repeat(250)}@example.test` }, 'email'],
      [
        '/auth/register',
        { username: 'ab', email: 'a@b.test', code: '123456', password: 'long-enough' },
        'username',
      ],
      [
        '/auth/register',
        { username: 'has space', email: 'a@b.test', code: '123456', password: 'long-enough' },
        'username',
      ],
      [
        '/auth/register',
        { username: 'good_name', email: 'a@b.test', code: '12345', password: 'long-enough' },
        'code',
      ],
      [
        '/auth/register',
        { username: 'good_name', email: 'a@b.test', code: '123456', password: 'short' },
        'password',
      ],
      [
        '/auth/register',
        { username: 'good_name', email: 'a@b.test', code: '123456', password: 'x'.repeat(129) },
        'password',
      ],
      ['/auth/login', { username: 'someone' }, 'password'],
      ['/auth/login', { username: ['a'], password: 'x' }, 'username'],
      ['/auth/totp/verify', { challenge_token: 'x', code: 'abcdef' }, 'code'],
      ['/auth/totp/verify', { code: '123456' }, 'challenge_token'],
      [
        '/auth/password/reset',
        { email: 'a@b.test', code: '123456', new_password: 1234567890 },
        'new_password',
      ],
      ['/auth/totp/enable', { code: 123456 }, 'code', true],
      ['/auth/totp/disable', {}, 'code', true],
      ['/auth/email/verify', { email: 'x@y.test', code: '1234567', password: 'x' }, 'code', true],
      ['/auth/email/verify', { email: 'x@y.test', code: '123456' }, 'password', true],
      ['/auth/totp/setup', {}, 'password', true],
      ['/auth/totp/setup', { password: 42 }, 'password', true],
      ['/auth/totp/setup', { password: 'x'.repeat(129) }, 'password', true],
      ['/auth/email/unbind', {}, 'password', true],
      ['/auth/password', { current_password: user.password, new_password: 'short' }, 'new_password', true],
    ];
    for (const [path, body, field, authed] of cases) {
      const res = await h.call('POST', path, body, authed ? { token: user.token } : {});
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.message.startsWith(`${field}:`), res.body.message).toBe(true);
    }
  });

  it('never answers 5xx, nor echoes secrets, for arbitrary bodies on any account endpoint', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'info', sink: (line) => lines.push(line) });
    const h = authHarness();
    const user = await h.registerUser();
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.constantFrom('123456', 'a@b.test', user.email, user.username, '../../etc', '"\'<>', '\u0000'),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    );
    const body = fc.oneof(
      fc.dictionary(
        fc.constantFrom(
          'username',
          'email',
          'code',
          'password',
          'new_password',
          'current_password',
          'challenge_token',
          'x',
        ),
        value,
      ),
      fc.string({ maxLength: 30 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PUBLIC, ...SESSION),
        body,
        fc.boolean(),
        async (path, payload, withPrefix) => {
          const authed = SESSION.includes(path);
          const res = await h.call(
            'POST',
            `${withPrefix ? '/api/v1' : ''}${path}`,
            payload,
            authed ? { token: user.token } : {},
          );
          expect(res.status).toBeLessThan(500);
          expect(res.raw).not.toContain(user.password);
          expect(res.raw).not.toMatch(/argon2|totp_secret|digest/);
        },
      ),
      { numRuns: 60 },
    );
    const log = lines.join('\n');
    expect(log).not.toContain(user.password);
    expect(log).not.toMatch(/argon2id/);
    configureLogging({ level: 'silent' });
  });
});
