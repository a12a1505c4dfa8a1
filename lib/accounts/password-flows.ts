// Password change (authenticated) and reset by e-mail code (SPEC.md 4.1 rules 3-4). Both end every
// session of the account: the session epoch moves in the same update as the hash.
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import { ConditionFailedError } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import { codeMail } from '../mail/templates.ts';
import { CODE_TTL_SECONDS, invalidCode } from './codes.ts';
import { type AccountContext, accountChanged, sameAddress } from './context.ts';
import type { Account } from './repository.ts';

/** POST /auth/password `{current_password, new_password}`: answers a fresh session (the old ones end). */
export async function changePassword(
  ctx: AccountContext,
  account: Account,
  input: { current_password: string; new_password: string },
) {
  await ctx.limitCredentialChecks(account.id);
  if (!(await verifyPassword(account.password_hash, input.current_password))) {
    throw errors.badRequest('current_password: is incorrect');
  }
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
  return ctx.sessionFor(updated);
}

/**
 * POST /auth/password/reset/code `{email}`: the same answer whether or not the address belongs to a
 * verified account; a code is sent only when it does. The per-address throttle applies to every address,
 * so a 429 does not tell either.
 */
export async function sendResetCode(ctx: AccountContext, input: { email: string }, sourceIp: string) {
  await ctx.limitIp(sourceIp);
  await ctx.throttle.consume(
    `code-send#reset#${input.email.trim().toLowerCase()}`,
    ctx.limits.codeSend,
    'Too many codes sent to this address; try again later',
  );
  const answer = { expires_at: ctx.expiresIn(CODE_TTL_SECONDS) };
  const account = await ctx.accounts.findByIdentifier(input.email);
  if (
    account &&
    account.status === 'active' &&
    account.email_verified &&
    sameAddress(account.email, input.email)
  ) {
    const { code } = await ctx.codes.issue('reset', input.email, {
      target: input.email,
      accountId: account.id,
    });
    await ctx.mailer.send(codeMail('reset', account.email!, code, CODE_TTL_SECONDS / 60));
  }
  return answer;
}

/** The one error of /auth/password/reset for an unknown address and a wrong code alike (SPEC.md 4.1 rule 4). */
export const resetRefused = () => invalidCode('email or code is invalid or expired');

/** POST /auth/password/reset `{email, code, new_password}`. */
export async function resetPassword(
  ctx: AccountContext,
  input: { email: string; code: string; new_password: string },
  sourceIp: string,
) {
  await ctx.limitIp(sourceIp);
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
  return null;
}
