// Login reads what it needs before the password hash from the identifier claim (docs/PERFORMANCE.md
// "Login"): the claim's copy of the username and password hash. The account item stays the authority: a
// claim without the copy (made before it existed) or with a stale one still logs in right and wrong
// passwords exactly as before, and is brought up to date by the next successful login.
import { describe, expect, it } from 'vitest';
import { identifierKey } from '#lib/accounts/identifiers.ts';
import { hashPassword } from '#lib/accounts/passwords.ts';
import { authHarness } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

await provisionTestStack();

type Harness = ReturnType<typeof authHarness>;

/** An address no earlier run used (the stand-in's table may outlive a run): its per-address bucket is idle. */
const freshAddress = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

async function claim(h: Harness, value: string) {
  return h.table.get<{ pk: string; sk: string; username?: string; password_hash?: string }>(
    identifierKey(value),
  );
}

/** DynamoDB operations the harness's table client sends while `run` runs, in order. */
async function operations(h: Harness, run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const name = `count-${Math.random()}`;
  h.table.client.middlewareStack.add(
    (next, context) => async (args) => {
      seen.push(String(context.commandName ?? '').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    h.table.client.middlewareStack.remove(name);
  }
  return seen;
}

describe('login from the claim copy', () => {
  it('gives every new claim the copy, and logs in by username and by e-mail from it', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const account = await h.accounts.repository.get(user.id);
    for (const value of [user.username, user.email]) {
      expect(await claim(h, value)).toMatchObject({
        username: user.username,
        password_hash: account!.password_hash,
      });
    }
    expect(
      (await h.call('POST', '/auth/login', { username: user.email, password: user.password })).status,
    ).toBe(200);
    expect(
      (
        await h.call('POST', '/auth/login', {
          username: user.username.toUpperCase(),
          password: user.password,
        })
      ).status,
    ).toBe(200);
  });

  it('makes five DynamoDB calls for a login by username and writes only the failure for a wrong password', async () => {
    const h = authHarness({ limits: { ipPerMinute: 60 } });
    const user = await h.registerUser();
    // Addresses of their own: an idle per-address bucket takes one update (a busy one, two).
    const right = await operations(h, async () => {
      const answer = await h.call(
        'POST',
        '/auth/login',
        { username: user.username, password: user.password },
        { ip: freshAddress() },
      );
      expect(answer.status).toBe(200);
    });
    // Before the hash: the address limit, the claim, the guard's slot; beside it the account; after it one batch.
    expect([...right].sort()).toEqual(['BatchWriteItem', 'GetItem', 'GetItem', 'UpdateItem', 'UpdateItem']);
    const wrong = await operations(h, async () => {
      const answer = await h.call(
        'POST',
        '/auth/login',
        { username: user.username, password: 'not-it-at-all' },
        { ip: freshAddress() },
      );
      expect(answer.status).toBe(401);
    });
    // The writes of a wrong password: the address limit, the guard's slot (the failure count), the event.
    expect(wrong.filter((operation) => operation !== 'GetItem').sort()).toEqual([
      'PutItem',
      'UpdateItem',
      'UpdateItem',
    ]);
    expect(wrong).not.toContain('BatchWriteItem');
  });

  it('logs in with a claim made before the copy existed, and adds the copy on success only', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const key = identifierKey(user.username);
    await h.table.update(key, { UpdateExpression: 'REMOVE username, password_hash' });

    const wrong = await h.call('POST', '/auth/login', {
      username: user.username,
      password: 'wrong-password-1',
    });
    expect(wrong.status).toBe(401);
    expect((await claim(h, user.username))?.password_hash).toBeUndefined();

    const right = await h.call('POST', '/auth/login', { username: user.username, password: user.password });
    expect(right.status).toBe(200);
    const account = await h.accounts.repository.get(user.id);
    expect(await claim(h, user.username)).toMatchObject({
      username: user.username,
      password_hash: account!.password_hash,
    });
  });

  it('lets the account decide when the copy is stale: the old password fails, the new one works and refreshes it', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const oldPassword = 'the-old-password-9';
    // The copy says another password than the account's (a password change whose copy update was lost).
    await h.table.update(identifierKey(user.email), {
      UpdateExpression: 'SET password_hash = :hash',
      ExpressionAttributeValues: { ':hash': await hashPassword(oldPassword) },
    });

    expect(
      (await h.call('POST', '/auth/login', { username: user.email, password: oldPassword })).status,
    ).toBe(401);
    expect(
      (await h.call('POST', '/auth/login', { username: user.email, password: user.password })).status,
    ).toBe(200);
    const account = await h.accounts.repository.get(user.id);
    expect((await claim(h, user.email))?.password_hash).toBe(account!.password_hash);
  });

  it('keeps both copies in step with a password change', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    const changed = await h.call(
      'POST',
      '/auth/password',
      { current_password: user.password, new_password: 'a-brand-new-password-2' },
      { token: user.token },
    );
    expect(changed.status).toBe(200);
    const account = await h.accounts.repository.get(user.id);
    for (const value of [user.username, user.email]) {
      expect((await claim(h, value))?.password_hash).toBe(account!.password_hash);
    }
    expect(
      (await h.call('POST', '/auth/login', { username: user.username, password: user.password })).status,
    ).toBe(401);
    expect(
      (await h.call('POST', '/auth/login', { username: user.email, password: 'a-brand-new-password-2' }))
        .status,
    ).toBe(200);
  });
});
