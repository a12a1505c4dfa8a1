// Password change (authenticated) and reset by e-mail code (docs/SPEC.md 4.1 rules 3-4, docs/DESIGN.md 10). Both
// end every session of the account (the session epoch moves in the same update as the hash); a reset
// also revokes every API token (the token epoch moves too). Both send a notice mail.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import type { ClientInfo } from './client.ts';
import { CODE_TTL_SECONDS, invalidCode } from './codes.ts';
import { type AccountContext, accountChanged, requirePassword, sameAddress } from './context.ts';
import { hashPassword } from './passwords.ts';
import type { Account } from './repository.ts';

/** POST /auth/password `{current_password, new_password}`: answers a fresh session (the old ones end). */
export async function changePassword(
  ctx: AccountContext,
  account: Account,
  input: { current_password: string; new_password: string },
  client: ClientInfo,
) {
  await requirePassword(ctx, account, input.current_password, 'current_password');
  if (input.new_password === input.current_password) {
    throw errors.badRequest('new_password: must differ from the current password');
  }
  const passwordHash = await hashPassword(input.new_password);
  let updated: Account;
  try {
    updated = await ctx.accounts.changePasswordHash(account, passwordHash);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw accountChanged();
    throw error;
  }
  const [session] = await Promise.all([
    ctx.sessionFor(updated, client),
    ctx.securityChange(updated, 'password_changed', client, { kind: 'password_changed' }),
  ]);
  return session;
}

/**
 * POST /auth/password/reset/code `{email}`: the same answer, after the same table work, whether or not the
 * address belongs to a verified account; a code is mailed only when it does (otherwise an unusable code
 * bound to no account is stored, as a real one would be). The answer waits until `resetCodeMinMs` has
 * passed, so the mail round trip does not show either. The per-address throttle applies to every address,
 * so a 429 does not tell.
 */
export async function sendResetCode(ctx: AccountContext, input: { email: string }, client: ClientInfo) {
  const started = performance.now();
  await ctx.limitIp(client.ip);
  await ctx.throttle.consume(
    `code-send#reset#${input.email.trim().toLowerCase()}`,
    ctx.limits.codeSend,
    'Too many codes sent to this address; try again later',
  );
  const answer = { expires_at: ctx.expiresIn(CODE_TTL_SECONDS) };
  const accountId = await ctx.accounts.ownerOf(input.email);
  // Nobody by that address: the decoy account is read instead, an item of the same size (decoy.ts).
  const found = accountId ? await ctx.accounts.get(accountId) : await ctx.decoy.read().then(() => undefined);
  const eligible =
    found !== undefined &&
    found.status === 'active' &&
    found.email_verified &&
    sameAddress(found.email, input.email);
  const { code } = await ctx.codes.issue('reset', input.email, {
    target: input.email,
    ...(eligible ? { accountId: found.id } : {}),
  });
  try {
    if (eligible) await ctx.mailer.send(codeMail('reset', found.email!, code, CODE_TTL_SECONDS / 60));
  } finally {
    // Also when the mail fails: the 503 then comes no sooner than any other answer.
    const wait = ctx.limits.resetCodeMinMs - (performance.now() - started);
    if (wait > 0) await sleep(wait);
  }
  return answer;
}

/** The one error of /auth/password/reset for an unknown address and a wrong code alike (docs/SPEC.md 4.1 rule 4). */
export const resetRefused = () => invalidCode('email or code is invalid or expired');

/** POST /auth/password/reset `{email, code, new_password}`. */
export async function resetPassword(
  ctx: AccountContext,
  input: { email: string; code: string; new_password: string },
  client: ClientInfo,
) {
  await ctx.limitIp(client.ip);
  // Hashed first, so known and unknown addresses cost the same work.
  const passwordHash = await hashPassword(input.new_password);
  const checked = await ctx.codes.check('reset', input.email, input.code, {
    target: input.email,
    error: resetRefused,
  });
  const account = checked.item.account_id ? await ctx.accounts.get(checked.item.account_id) : undefined;
  if (!account?.email || !sameAddress(account.email, input.email)) throw resetRefused();
  try {
    await ctx.table.transact([ctx.accounts.resetPasswordItem(account, passwordHash), checked.consume]);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw resetRefused();
    throw error;
  }
  await ctx.accounts.syncLoginCopies(account, { username: account.username, password_hash: passwordHash });
  // The token epoch moved with the password: every token is already refused. Deleting the items tidies
  // the token list.
  await Promise.all([
    ctx.apiTokens.deleteAll(account.id).catch((error: unknown) => {
      log.warn('revoked API tokens not deleted', {
        account_id: account.id,
        error_name: (error as Error)?.name,
      });
    }),
    ctx.securityChange(account, 'password_reset', client, { kind: 'password_reset' }),
  ]);
  return null;
}
