// Login at the two doors (SPEC.md 3.2, 5; DESIGN.md 5): ordinary users at /auth/login, administrators
// at /admin/auth/login. Every refusal is the same 401 after the same hash work.
import { hashPassword, needsRehash, verifyPassword } from '../auth/passwords.ts';
import { ConditionFailedError } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import { log } from '../log.ts';
import type { AccountContext } from './context.ts';
import type { Role } from './model.ts';
import type { Account } from './repository.ts';
import { issueChallenge } from './totp.ts';

export const badCredentials = () => errors.unauthorized('Invalid username or password');

/** `username` takes a username or an e-mail; both live in one namespace, usernames claimed first. */
export async function login(
  ctx: AccountContext,
  door: Role,
  input: { username: string; password: string },
  sourceIp: string,
) {
  // The per-IP limit and the look-up are independent: one wait, not two. A refusal still stops the
  // login before any hash work (the look-up's answer is then unused).
  const [, account] = await Promise.all([
    ctx.limitIp(sourceIp),
    ctx.accounts.findByIdentifier(input.username),
  ]);
  // Always one full verification: unknown users cost a dummy one (lib/auth/passwords.ts).
  const valid = await verifyPassword(account?.password_hash, input.password);
  if (!account || !valid || account.status !== 'active' || account.role !== door) throw badCredentials();
  if (needsRehash(account.password_hash)) await rehash(ctx, account, input.password);
  if (account.totp_enabled) return issueChallenge(ctx, account);
  // The session is written only after the password verified: a wrong guess never costs a write.
  return ctx.sessionFor(account);
}

/** Re-hashes with the current parameters; only if nobody changed the password meanwhile. */
async function rehash(ctx: AccountContext, account: Account, password: string): Promise<void> {
  const fresh = await hashPassword(password);
  try {
    await ctx.accounts.rehashPassword(account.id, account.password_hash, fresh);
    account.password_hash = fresh;
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    log.info('password re-hash skipped: the password changed meanwhile', { account_id: account.id });
  }
}
