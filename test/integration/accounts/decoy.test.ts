// The decoy account (lib/accounts/decoy.ts): every unknown-name login and reset request reads it, as a
// known name's reads its account, so the two cost the same (test/integration/accounts/timing.test.ts); the
// read goes to one of its copies, so no single item takes a read for every unknown name.
import { describe, expect, it } from 'vitest';
import { DECOY_COPIES } from '#lib/accounts/decoy.ts';
import { authHarness } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

await provisionTestStack();

type Harness = ReturnType<typeof authHarness>;

/** The decoy copies the harness's table client reads while `run` runs, by key. */
async function decoyReads(h: Harness, run: () => Promise<unknown>): Promise<Map<string, number>> {
  const reads = new Map<string, number>();
  const name = `decoy-reads-${Math.random()}`;
  h.table.client.middlewareStack.add(
    (next) => async (args) => {
      // The document client's stack is its client's: the key is already in DynamoDB's attribute form here.
      const key = /decoy#account#\d+/.exec(JSON.stringify(args.input))?.[0];
      if (key) reads.set(key, (reads.get(key) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    h.table.client.middlewareStack.remove(name);
  }
  return reads;
}

const unknownLogin = (h: Harness) =>
  h.call('POST', '/auth/login', {
    username: `nobody_${Math.random().toString(36).slice(2, 10)}`,
    password: 'a-wrong-password-1',
  });

const total = (reads: Map<string, number>) => [...reads.values()].reduce((sum, n) => sum + n, 0);

describe('the decoy account', () => {
  it('is read once by every unknown-name login and reset request, as a known name reads its account', async () => {
    // Prepare: a container of its own (the auth warm-up creates the copies before its first request).
    const h = authHarness();
    await unknownLogin(h);

    // Act
    const login = await decoyReads(h, async () => expect((await unknownLogin(h)).status).toBe(401));
    const resetCode = await decoyReads(h, async () =>
      expect(
        (await h.call('POST', '/auth/password/reset/code', { email: 'nobody-here@example.test' })).status,
      ).toBe(200),
    );

    // Assess
    expect(total(login)).toBe(1);
    expect(total(resetCode)).toBe(1);
  });

  it('spreads those reads over its copies: no copy takes a read for every unknown name', async () => {
    // Prepare
    const h = authHarness();
    await unknownLogin(h);
    const logins = 48;

    // Act
    const reads = await decoyReads(h, async () => {
      for (let n = 0; n < logins; n++) expect((await unknownLogin(h)).status).toBe(401);
    });

    // Assess: every read on a copy, spread (3 per copy on average; chance alone keeps any under 12).
    expect(total(reads)).toBe(logins);
    expect([...reads.keys()].every((key) => /^decoy#account#\d+$/.test(key))).toBe(true);
    expect(reads.size).toBeGreaterThanOrEqual(DECOY_COPIES / 2);
    expect(Math.max(...reads.values())).toBeLessThan(logins / 4);
  });
});
