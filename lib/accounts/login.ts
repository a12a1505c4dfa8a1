// Login at the two doors (docs/SPEC.md 3.2, 5; docs/DESIGN.md 5, 10): ordinary users at /auth/login, administrators
// at /admin/auth/login. Every refusal is the same 401 after the same work, known account or not: the same
// reads (identifier claim, account item or the decoy), the same guard write before the hash, one hash, and
// one write after a failure (the account's `login_failed` event, or the unknown identifier's guard).

import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { issueChallenge } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import type { AccountContext } from './context.ts';
import { guardKey, guardSubject } from './login-guard.ts';
import type { Role } from './model.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { type Account, publicAccount, writeBatch } from './repository.ts';

export const badCredentials = () => errors.unauthorized('Invalid username or password');
export const accountDisabled = () => errors.forbidden('account disabled');

/**
 * `username` takes a username or an e-mail; both live in one namespace, usernames claimed first.
 *
 * The waits (docs/PERFORMANCE.md "Login"): before the hash one, the per-address limit beside the claim read
 * (which carries the account's username and a copy of its password hash) and, for a username, the guessing
 * guard's slot (keyed by the username, so it needs nothing read); a login by e-mail takes its slot in a
 * second wait, once the claim named the username. The account item is read beside the hash (the authority:
 * status, role, session epoch, and the hash itself, verified again when the copy differs). After the hash
 * one write: the guard's reset, the session and the `login` event in one batch; or, for a failure, the
 * `login_failed` event (or the unknown identifier's guard).
 */
export async function login(
  ctx: AccountContext,
  door: Role,
  input: { username: string; password: string },
  client: ClientInfo,
) {
  const identifier = input.username;
  const byUsername = !identifier.includes('@');
  const earlySubject = byUsername ? guardSubject(undefined, identifier) : undefined;
  // A refusal of the per-address limit still stops the login before any hash work.
  const [, claim, earlyAdmission] = await Promise.all([
    ctx.limitIp(client.ip),
    ctx.accounts.claimOf(identifier),
    earlySubject ? ctx.loginGuard.admit(earlySubject) : undefined,
  ]);
  // The same read for nobody: the decoy account (decoy.ts), so an unknown identifier costs what a known
  // one costs.
  const accountRead: Promise<Account | undefined> = claim
    ? ctx.accounts.get(claim.account_id)
    : ctx.decoy.read().then(() => undefined);
  accountRead.catch(() => {});
  let username = claim?.username;
  let copy = claim?.password_hash;
  if (claim && (username === undefined || copy === undefined)) {
    // A claim from before the copy existed: the account first (it gets the copy on success).
    const account = await accountRead;
    username = account?.username;
    copy = account?.password_hash;
  }
  const subject = guardSubject(username, identifier);
  const admission =
    earlyAdmission && subject === earlySubject ? earlyAdmission : await ctx.loginGuard.admit(subject);
  if (!admission.admitted) {
    throw errors.tooManyRequests(
      admission.retryAfterSeconds,
      'Too many failed logins for this account; try again later',
    );
  }
  // Always one full verification of a stored hash (the decoy's for nobody; lib/accounts/passwords.ts's dummy
  // if even that is missing).
  const hash = claim ? copy : await ctx.decoy.hash();
  let valid = await verifyPassword(hash, input.password);
  // Awaited for nobody as well (the decoy's read): the same work either way.
  const account = await accountRead;
  // The copy is behind the account (a password changed since): the account's own hash decides.
  if (account && account.password_hash !== hash)
    valid = await verifyPassword(account.password_hash, input.password);
  // The wrong door is a failure like a wrong password, in every respect.
  if (!account || !valid || account.role !== door) {
    await (account
      ? ctx.events.record(account.id, 'login_failed', client)
      : ctx.loginGuard.recordUnknownFailure(subject, client));
    throw badCredentials();
  }
  // Only a caller who knows the password learns that the account is disabled.
  if (account.status !== 'active') {
    await ctx.loginGuard.reset(subject);
    throw accountDisabled();
  }
  const stale = claim!.username !== account.username || claim!.password_hash !== account.password_hash;
  await Promise.all([
    needsRehash(account.password_hash) ? rehash(ctx, account, input.password) : undefined,
    indexIdentifiers(ctx, account),
    // Claims from before the copy, or behind a password change: brought up to date, once.
    stale && !needsRehash(account.password_hash)
      ? ctx.accounts.syncLoginCopies(account, account, [identifier])
      : undefined,
  ]);
  if (account.totp_enabled) {
    const [, challenge] = await Promise.all([ctx.loginGuard.reset(subject), issueChallenge(ctx, account)]);
    return challenge;
  }
  // The session is written only after the password verified: a wrong guess never costs a session write.
  const { issued, item } = await ctx.sessions.prepare(account, client);
  await writeBatch(ctx.table, [item, ctx.events.item(account.id, 'login', client)], [guardKey(subject)]);
  return { ...issued, user: publicAccount(account) };
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
