// The decoy account (lib/accounts/decoy.ts) is read once per container and then remembered: it never
// changes once written, and every unknown-name login reading it would make it a hot key.
import { describe, expect, it } from 'vitest';
import { DECOY_ACCOUNT_KEY } from '#lib/accounts/decoy.ts';
import { authHarness } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

await provisionTestStack();

type Harness = ReturnType<typeof authHarness>;

/** How many requests for the decoy item the harness's table client sends while `run` runs. */
async function decoyReads(h: Harness, run: () => Promise<unknown>): Promise<number> {
  let reads = 0;
  const name = `decoy-reads-${Math.random()}`;
  h.table.client.middlewareStack.add(
    (next) => async (args) => {
      if (JSON.stringify(args.input).includes(DECOY_ACCOUNT_KEY.pk)) reads += 1;
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

describe('the decoy account', () => {
  it('is read by the first unknown-name login of a container only; later ones are refused alike without reading it', async () => {
    // Prepare: a container of its own (the auth warm-up creates the decoy before its first request).
    const h = authHarness();

    // Act
    const first = await decoyReads(h, async () => expect((await unknownLogin(h)).status).toBe(401));
    const second = await decoyReads(h, async () => expect((await unknownLogin(h)).status).toBe(401));
    const resetCode = await decoyReads(h, async () =>
      expect(
        (await h.call('POST', '/auth/password/reset/code', { email: 'nobody-here@example.test' })).status,
      ).toBe(200),
    );

    // Assess
    // The warm-up's look for the item, and the login's read of it.
    expect(first).toBeGreaterThanOrEqual(1);
    expect(second).toBe(0);
    expect(resetCode).toBe(0);
  });
});
