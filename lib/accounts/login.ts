// Login at the two doors (docs/SPEC.md 3.2, 5; docs/DESIGN.md 5, 10): ordinary users at /auth/login, administrators
// at /admin/auth/login. Every refusal is the same 401 after the same work, known account or not: the same
// reads (identifier claim, account item), the same guard write before the hash, one hash, and one write
// after a failure (the account's `login_failed` event, or the unknown identifier's guard).
import { hashPassword, needsRehash, verifyPassword } from '../auth/passwords.ts';
import { ConditionFailedError } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import { log } from '../log.ts';
import { issueChallenge } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import type { AccountContext } from './context.ts';
import { guardSubject } from './login-guard.ts';
import type { Role } from './model.ts';
import type { Account } from './repository.ts';

export const badCredentials = () => errors.unauthorized('Invalid username or password');
export const accountDisabled = () => errors.forbidden('account disabled');

/** `username` takes a username or an e-mail; both live in one namespace, usernames claimed first. */
export async function login(
  ctx: AccountContext,
  door: Role,
  input: { username: string; password: string },
  client: ClientInfo,
) {
  // The per-address limit and the look-up are independent: one wait, not two. A refusal still stops the
  // login before any hash work (the look-up's answer is then unused).
  const [, accountId] = await Promise.all([ctx.limitIp(client.ip), ctx.accounts.ownerOf(input.username)]);
  const subject = guardSubject(accountId, input.username);
  // Nobody by that name: the decoy account is read and verified against instead (decoy.ts).
  const [found, admission] = await Promise.all([
    accountId ? ctx.accounts.get(accountId) : ctx.decoy.read(),
    ctx.loginGuard.admit(subject),
  ]);
  if (!admission.admitted) {
    throw errors.tooManyRequests(
      admission.retryAfterSeconds,
      'Too many failed logins for this account; try again later',
    );
  }
  const account = accountId ? (found as Account | undefined) : undefined;
  // Always one full verification of a stored hash (the decoy's for nobody; lib/auth/passwords.ts's dummy
  // if even that is missing).
  const valid = await verifyPassword(found?.password_hash, input.password);
  // The wrong door is a failure like a wrong password, in every respect.
  if (!account || !valid || account.role !== door) {
    await (account
      ? ctx.events.record(account.id, 'login_failed', client)
      : ctx.loginGuard.recordUnknownFailure(subject, client));
    throw badCredentials();
  }
  await ctx.loginGuard.reset(subject);
  // Only a caller who knows the password learns that the account is disabled.
  if (account.status !== 'active') throw accountDisabled();
  await Promise.all([
    needsRehash(account.password_hash) ? rehash(ctx, account, input.password) : undefined,
    indexIdentifiers(ctx, account),
  ]);
  if (account.totp_enabled) return issueChallenge(ctx, account);
  // The session is written only after the password verified: a wrong guess never costs a session write.
  const [session] = await Promise.all([
    ctx.sessionFor(account, client),
    ctx.events.record(account.id, 'login', client),
  ]);
  return session;
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

/** Accounts made before the back-office search index join it on their next login (once). */
async function indexIdentifiers(ctx: AccountContext, account: Account): Promise<void> {
  if (account.ident_indexed) return;
  try {
    await ctx.accounts.indexIdentifiers(account);
  } catch (error) {
    log.warn('identifier index not updated', { account_id: account.id, error_name: (error as Error)?.name });
  }
}
