// Reset links (docs/ACCOUNTS.md "Password reset"): every reset mail carries a link beside its code; every
// link mailed in the last 10 minutes works until any reset of the account, and wrong codes never consume
// one. So whoever burns the owner's codes, or the address's send allowance, only mails the owner working
// links.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { authHarness, movableClock } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

type Harness = ReturnType<typeof authHarness>;

/** The reset links mailed to `to`, oldest first, as their tokens. */
function linksTo(h: Harness, to: string): string[] {
  return h.mail.to(to).flatMap((mail) => {
    const found = /\/#\/reset\?token=([A-Za-z0-9_-]{43})/.exec(mail.text ?? '');
    return found ? [found[1]!] : [];
  });
}

const resetBy = (h: Harness, token: string, new_password: string) =>
  h.call('POST', '/auth/password/reset', { token, new_password });

describe('reset links', () => {
  it('survive an attacker burning the codes and the send allowance: the owner resets through the newest link', async () => {
    // Prepare
    const h = authHarness();
    const user = await h.registerUser();
    // Act: the attacker asks for codes and burns each with 5 wrong guesses, until sends are refused.
    const sends: number[] = [];
    for (let n = 0; n < 4; n++) {
      sends.push((await h.call('POST', '/auth/password/reset/code', { email: user.email })).status);
      for (let guess = 0; guess < 5; guess++) {
        const wrong = await h.call('POST', '/auth/password/reset', {
          email: user.email,
          code: String(100000 + guess),
          new_password: 'attacker-pw-1',
        });
        expect(wrong.status).toBe(400);
      }
    }
    expect(sends.filter((status) => status === 429).length).toBeGreaterThan(0);
    const links = linksTo(h, user.email);
    expect(links).toHaveLength(sends.filter((status) => status === 200).length);
    // Assess: the owner's newest link works; then every other link and the code stop working.
    const reset = await resetBy(h, links.at(-1)!, 'reset-pw-123');
    expect(reset.status).toBe(200);
    expect((await resetBy(h, links[0]!, 'reset-pw-456')).status).toBe(400);
    expect((await resetBy(h, links.at(-1)!, 'reset-pw-456')).status).toBe(400);
    const login = await h.call('POST', '/auth/login', { username: user.username, password: 'reset-pw-123' });
    expect(login.status).toBe(200);
    const mail = h.mail.to(user.email).at(-2)!;
    expect(mail.text).toContain(`http://localhost:3000/#/reset?token=`);
  });

  it('works for every link mailed in the last 10 minutes, an older one too, and ends the code with it', async () => {
    const clock = movableClock();
    const h = authHarness({ clock });
    const user = await h.registerUser();
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    clock.advance(61_000);
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const code = h.mail.codeFor(user.email);
    const [older] = linksTo(h, user.email);
    expect((await resetBy(h, older!, 'reset-pw-123')).status).toBe(200);
    const byCode = await h.call('POST', '/auth/password/reset', {
      email: user.email,
      code,
      new_password: 'reset-pw-456',
    });
    expect(byCode.status).toBe(400);
    // A code's reset ends the links as well; links expire after 10 minutes.
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    clock.advance(61_000);
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const [, , third, fourth] = linksTo(h, user.email);
    const fresh = await h.call('POST', '/auth/password/reset', {
      email: user.email,
      code: h.mail.codeFor(user.email),
      new_password: 'reset-pw-456',
    });
    expect(fresh.status).toBe(200);
    expect((await resetBy(h, fourth!, 'brand-new-pw')).status).toBe(400);
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    clock.advance(10 * 60_000 + 1000);
    const expired = linksTo(h, user.email).at(-1)!;
    expect(expired).not.toBe(third);
    expect((await resetBy(h, expired, 'brand-new-pw')).status).toBe(400);
  });

  it('resets once when 12 requests race, with one link or with two', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const [first, second] = linksTo(h, user.email);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, n) => resetBy(h, n % 3 === 0 ? second! : first!, `raced-pw-${n}`)),
    );
    expect(results.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(results.filter((answer) => answer.status === 400)).toHaveLength(11);
    const account = await h.accounts.repository.get(user.id);
    expect(account!.session_epoch).toBe(1);
  });

  it('holds "once" in the write itself: a link read before another reset committed still fails', async () => {
    const h = authHarness();
    const user = await h.registerUser();
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const [first, second] = linksTo(h, user.email);
    const before = await h.accounts.repository.get(user.id);
    expect((await resetBy(h, first!, 'reset-pw-123')).status).toBe(200);
    // The second reset reads the account as it was before the first one committed.
    const stale = vi.spyOn(h.accounts.repository, 'get').mockResolvedValue(before);
    try {
      expect((await resetBy(h, second!, 'reset-pw-456')).status).toBe(400);
    } finally {
      stale.mockRestore();
    }
    const login = await h.call('POST', '/auth/login', { username: user.username, password: 'reset-pw-123' });
    expect(login.status).toBe(200);
  });

  it('answers a forged, malformed or unknown-address link like a wrong code, never 5xx', async () => {
    const h = authHarness();
    const unknown = `nobody-${Date.now()}@example.test`;
    expect((await h.call('POST', '/auth/password/reset/code', { email: unknown })).status).toBe(200);
    expect(h.mail.to(unknown)).toHaveLength(0);
    const forged = await resetBy(h, 'A'.repeat(43), 'brand-new-pw');
    expect(forged.status).toBe(400);
    expect(forged.body.message).toBe('email or code is invalid or expired');
    const malformed = await resetBy(h, 'short', 'brand-new-pw');
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain('token');
    const neither = await h.call('POST', '/auth/password/reset', { new_password: 'brand-new-pw' });
    expect(neither.status).toBe(400);
    expect(neither.body.message).toContain('email');
  });
});
