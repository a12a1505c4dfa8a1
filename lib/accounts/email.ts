// E-mail binding, rebinding and unbinding (docs/SPEC.md 3.1, 4.1 rule 6, 6.2; docs/DESIGN.md 10). Binding and
// unbinding always need the current password: an address bound is an address that can reset the password.

import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, type TransactItem } from '#lib/platform/db/table.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import type { ClientInfo } from './client.ts';
import { CODE_TTL_SECONDS } from './codes.ts';
import { type AccountContext, accountChanged, requirePassword, sameAddress } from './context.ts';
import { claimItem, releaseItem } from './identifiers.ts';
import { type Account, publicAccount } from './repository.ts';

const boundElsewhere = () => errors.conflict('email: is already bound to another account');

async function assertFree(ctx: AccountContext, account: Account, email: string): Promise<void> {
  const owner = await ctx.accounts.ownerOf(email);
  if (owner && owner !== account.id) throw boundElsewhere();
}

/** POST /auth/email/code `{email}`: a binding code to the target address, throttled per account. */
export async function sendEmailCode(ctx: AccountContext, account: Account, input: { email: string }) {
  await assertFree(ctx, account, input.email);
  if (account.email_verified && sameAddress(account.email, input.email)) {
    throw errors.badRequest('email: is already the verified e-mail of this account');
  }
  await ctx.throttle.consume(
    `code-send#email_bind#${account.id}`,
    ctx.limits.codeSend,
    'Too many codes sent; try again later',
  );
  const { code, expiresAt } = await ctx.codes.issue('email_bind', account.id, {
    target: input.email,
    accountId: account.id,
  });
  await ctx.mailer.send(codeMail('email_bind', input.email, code, CODE_TTL_SECONDS / 60));
  return { expires_at: ctx.expiresIn((expiresAt.getTime() - ctx.now().getTime()) / 1000) };
}

/**
 * POST /auth/email/verify `{email, code, password}`: binds and verifies, always with the current password
 * (also when no verified address is bound yet: administrators start with an unverified one). Changing a
 * verified address sends a notice to the old address.
 */
export async function verifyEmail(
  ctx: AccountContext,
  account: Account,
  input: { email: string; code: string; password: string },
  client: ClientInfo,
) {
  await assertFree(ctx, account, input.email);
  await requirePassword(ctx, account, input.password);
  const changingVerified =
    account.email_verified && !!account.email && !sameAddress(account.email, input.email);
  const checked = await ctx.codes.check('email_bind', account.id, input.code, { target: input.email });
  const now = ctx.now().toISOString();
  const items: TransactItem[] = [ctx.accounts.emailChangeItem(account, input.email, true, now)];
  let claimIndex = -1;
  if (!sameAddress(account.email, input.email)) {
    claimIndex = items.push(claimItem(input.email, account.id, 'email', account)) - 1;
    if (account.email) items.push(releaseItem(account.email, account.id));
  }
  const consumeIndex = items.push(checked.consume) - 1;
  try {
    await ctx.table.transact(items);
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    if (error.failedItems.includes(claimIndex)) throw boundElsewhere();
    if (error.failedItems.includes(consumeIndex)) throw errors.badRequest('code: is invalid or expired');
    throw accountChanged();
  }
  if (!sameAddress(account.email, input.email)) {
    await ctx.securityChange(account, 'email_changed', client, {
      kind: 'email_changed',
      newEmail: input.email,
      // The old address hears of it only if it was verified as the owner's.
      ...(changingVerified && account.email ? { to: account.email } : {}),
    });
  }
  return publicAccount({ ...account, email: input.email, email_verified: true, updated_at: now });
}

/** POST /auth/email/unbind `{password}`. */
export async function unbindEmail(
  ctx: AccountContext,
  account: Account,
  input: { password: string },
  client: ClientInfo,
) {
  await requirePassword(ctx, account, input.password);
  if (!account.email) throw errors.conflict('No e-mail is bound to this account');
  try {
    await ctx.table.transact([
      ctx.accounts.emailChangeItem(account, null, false, ctx.now().toISOString()),
      releaseItem(account.email, account.id),
    ]);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw accountChanged();
    throw error;
  }
  await ctx.securityChange(account, 'email_changed', client, { kind: 'email_changed' });
  return publicAccount({ ...account, email: null, email_verified: false });
}
