import { beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { AppError } from '#lib/core/errors.ts';
import { statusOf as httpStatusOf } from '#lib/http/errors.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { sharedMasterKey, testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let table: Table;
const { sessions, signer, groups, accounts: built } = testDeps();
const { authenticate } = groups.accounts;
beforeAll(async () => {
  ({ table } = await provisionTestStack());
});

const withToken = (token: string) =>
  ({ headers: { authorization: `Bearer ${token}` } }) as unknown as HttpRequest;
// Domain errors carry a name; the status is the edge's mapping of it.
const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: unknown) => (error instanceof AppError ? httpStatusOf(error) : 500),
  );

describe('sessions', () => {
  it('authenticates a fresh session and carries the account', async () => {
    const { account, token } = await createTestAccount();
    const principal = await authenticate(withToken(token), 'session');
    expect(principal).toMatchObject({ accountId: account.id, role: 'user', via: 'session' });
    expect(principal?.account?.username).toBe(account.username);
  });

  it('refuses a missing, malformed or forged token with 401', async () => {
    const { token } = await createTestAccount();
    expect(await statusOf(authenticate({ headers: {} } as HttpRequest, 'session'))).toBe(401);
    expect(await statusOf(authenticate(withToken('nonsense'), 'session'))).toBe(401);
    const forged = `${token.slice(0, -4)}AAAA`;
    expect(await statusOf(authenticate(withToken(forged), 'session'))).toBe(401);
  });

  it('checks expiry, not-before and scope again each time it sees a token it has verified', async () => {
    const issued = new Date('2030-01-01T00:00:00Z');
    const at = (seconds: number) => new Date(issued.getTime() + seconds * 1000);
    const reasonOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'ok',
        (error: { reason?: string }) => error.reason,
      );
    const { token } = await signer.sign({ sub: 'someone', scope: 'session' }, 60, issued);
    const early = await signer.sign({ sub: 'someone', scope: 'session', nbf: 1893456030 }, 60, issued);
    for (let round = 0; round < 2; round++) {
      expect(await reasonOf(signer.verify(token, 'session', at(59)))).toBe('ok');
      expect(await reasonOf(signer.verify(token, 'session', at(60)))).toBe('expired');
      expect(await reasonOf(signer.verify(token, 'totp_challenge', at(1)))).toBe('wrong_scope');
      expect(await reasonOf(signer.verify(`${token.slice(0, -4)}AAAA`, 'session', at(1)))).toBe('invalid');
      expect(await reasonOf(signer.verify(early.token, 'session', at(29)))).toBe('invalid');
      expect(await reasonOf(signer.verify(early.token, 'session', at(30)))).toBe('ok');
    }
    const claims = await signer.verify(token, 'session', at(1));
    claims.sub = 'changed';
    expect((await signer.verify(token, 'session', at(1))).sub).toBe('someone');
  });

  it('ends one session on revoke and every session when the epoch moves', async () => {
    const { account, token } = await createTestAccount();
    const second = await sessions.issue(account);
    const claims = await signer.verify(token, 'session');
    await sessions.revoke(account, claims.jti);
    expect(await statusOf(authenticate(withToken(token), 'session'))).toBe(401);
    expect(await statusOf(authenticate(withToken(second.token), 'session'))).toBe(200);
    await table.update(accountKey(account.id), {
      UpdateExpression: 'ADD session_epoch :one',
      ExpressionAttributeValues: { ':one': 1 },
    });
    expect(await statusOf(authenticate(withToken(second.token), 'session'))).toBe(401);
  });

  it("stops a disabled account's sessions", async () => {
    const { account, token } = await createTestAccount();
    await table.update(accountKey(account.id), {
      UpdateExpression: 'SET #s = :disabled',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':disabled': 'disabled' },
    });
    expect(await statusOf(authenticate(withToken(token), 'session'))).toBe(401);
  });

  it('answers 403 for a token of another scope and for a user on an admin route', async () => {
    const { account, token } = await createTestAccount();
    const challenge = await signer.sign({ sub: account.id, scope: 'totp_challenge' }, 300);
    expect(await statusOf(authenticate(withToken(challenge.token), 'session'))).toBe(403);
    expect(await statusOf(authenticate(withToken(token), 'admin'))).toBe(403);
    const admin = await createTestAccount({ role: 'admin' });
    expect(await statusOf(authenticate(withToken(admin.token), 'admin'))).toBe(200);
  });

  it('keeps one signing key however many containers race to create it', async () => {
    const { buildSessions } = await import('#lib/accounts/build-sessions.ts');
    const masterKey = sharedMasterKey();
    await table.delete({ pk: 'settings#token-signing-key', sk: 'settings' });
    const container = () => buildSessions({ table, masterKey, ttlHours: 1, listingShards: 1 });
    const signers = Array.from({ length: 8 }, () => container().signer);
    const tokens = await Promise.all(
      signers.map((signer, n) => signer.sign({ sub: `s${n}`, scope: 'session' }, 60)),
    );
    for (const signer of signers) {
      for (const { token } of tokens) await expect(signer.verify(token, 'session')).resolves.toBeTruthy();
    }
  });
});

describe('accounts and passwords', () => {
  it('claims usernames and e-mails case-insensitively in one namespace', async () => {
    const { account } = await createTestAccount({ username: 'Alice', email: 'alice@example.test' });
    const accounts = built.repository;
    expect(await accounts.ownerOf('ALICE')).toBe(account.id);
    expect(await accounts.ownerOf('Alice@Example.Test')).toBe(account.id);
    await expect(createTestAccount({ username: 'alice' })).rejects.toMatchObject({ errorName: 'conflict' });
    await expect(createTestAccount({ username: 'alice@example.test' })).rejects.toMatchObject({
      errorName: 'conflict',
    });
  });

  it('lets exactly one of 20 concurrent creations of one username win, leaving no orphans', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, n) =>
        createTestAccount({ username: 'racer', email: `racer${n}@example.test` }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const accounts = built.repository;
    for (let n = 0; n < 20; n++) {
      const owner = await accounts.ownerOf(`racer${n}@example.test`);
      const winner = (
        outcomes.find((outcome) => outcome.status === 'fulfilled') as PromiseFulfilledResult<{
          account: { email: string };
        }>
      ).value;
      expect(owner !== undefined).toBe(winner.account.email === `racer${n}@example.test`);
    }
  });

  it('hashes with argon2id at the OWASP parameters and verifies', async () => {
    const stored = await hashPassword('s3cret-password');
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(needsRehash(stored)).toBe(false);
    expect(needsRehash('$argon2id$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo')).toBe(true);
    expect(await verifyPassword(stored, 's3cret-password')).toBe(true);
    expect(await verifyPassword(stored, 'wrong')).toBe(false);
    expect(await verifyPassword(undefined, 'anything')).toBe(false);
  });
});
