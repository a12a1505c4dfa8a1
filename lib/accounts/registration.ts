// Self-registration with an e-mail code (docs/SPEC.md 3.1, 4.1) and the two ways administrators come to be:
// bootstrap configuration (once) and the back office. Registration never creates an administrator.

import { AppError, errors } from '#lib/core/errors.ts';
import { ConditionFailedError, type TransactItem } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import type { ClientInfo } from './client.ts';
import { CODE_TTL_SECONDS, invalidCode } from './codes.ts';
import type { AccountContext } from './context.ts';
import { hashPassword } from './passwords.ts';
import { type Account, type NewAccount, publicAccount } from './repository.ts';

export const emailInUse = () => errors.conflict('email: is already in use');
export const usernameTaken = () => errors.conflict('username: is already taken');

/** POST /auth/register/code `{email}`: 409 when the address is anyone's e-mail or username. */
export async function sendRegistrationCode(
  ctx: AccountContext,
  input: { email: string },
  client: ClientInfo,
) {
  await ctx.limitIp(client.ip);
  if (await ctx.accounts.ownerOf(input.email)) throw emailInUse();
  await ctx.throttle.consume(
    `code-send#register#${input.email.trim().toLowerCase()}`,
    ctx.limits.codeSend,
    'Too many codes sent to this address; try again later',
  );
  const { code, expiresAt } = await ctx.codes.issue('register', input.email, { target: input.email });
  await ctx.mailer.send(codeMail('register', input.email, code, CODE_TTL_SECONDS / 60));
  return { expires_at: ctx.expiresIn((expiresAt.getTime() - ctx.now().getTime()) / 1000) };
}

/**
 * Creates the account in one transaction with its identifier claims and the consumption of `extra`
 * (e.g. the registration code). A pure transaction conflict (a concurrent writer of the same items) is
 * retried, so the loser learns the real reason (name taken, code used) instead of a vague conflict.
 */
async function createAccount(
  ctx: AccountContext,
  input: NewAccount,
  extra: TransactItem[],
  onExtraFailed: () => AppError,
): Promise<Account> {
  const extraFrom = input.email ? 3 : 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.accounts.create(input, extra);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      if (error.failedItems.some((index) => index >= extraFrom)) throw onExtraFailed();
      if (error.failedItems.length > 0 || attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}

/** POST /auth/register: an ordinary user, e-mail verified, the code consumed in the same transaction. */
export async function register(
  ctx: AccountContext,
  input: { username: string; email: string; code: string; password: string },
  client: ClientInfo,
) {
  await ctx.limitIp(client.ip);
  const [usernameOwner, emailOwner] = await Promise.all([
    ctx.accounts.ownerOf(input.username),
    ctx.accounts.ownerOf(input.email),
  ]);
  if (usernameOwner) throw usernameTaken();
  if (emailOwner) throw emailInUse();
  const checked = await ctx.codes.check('register', input.email, input.code, { target: input.email });
  const passwordHash = await hashPassword(input.password);
  const account = await createAccount(
    ctx,
    { username: input.username, email: input.email, emailVerified: true, role: 'user', passwordHash },
    [checked.consume],
    () => invalidCode(),
  );
  return publicAccount(account);
}

/**
 * A new administrator (the back office after re-authentication, admin/accounts.ts; the admin:create
 * script, which runs with table access and no session).
 */
export async function createAdministrator(
  ctx: AccountContext,
  input: { username: string; email: string; password: string },
) {
  const [usernameOwner, emailOwner] = await Promise.all([
    ctx.accounts.ownerOf(input.username),
    ctx.accounts.ownerOf(input.email),
  ]);
  if (usernameOwner) throw usernameTaken();
  if (emailOwner) throw emailInUse();
  const passwordHash = await hashPassword(input.password);
  // The address was typed by someone else: the new administrator verifies it (docs/ACCOUNTS.md).
  const account = await createAccount(
    ctx,
    { username: input.username, email: input.email, emailVerified: false, role: 'admin', passwordHash },
    [],
    () => errors.conflict('The account was changed by another request; try again'),
  );
  return publicAccount(account);
}

export const BOOTSTRAP_MARKER = { pk: 'settings#admin-bootstrap', sk: 'settings' };

/**
 * Creates the configured administrator once, if no administrator exists. Race-safe across containers:
 * the account, its claims and a marker item are one transaction, so exactly one container succeeds and
 * the marker stops any later start from creating it again (even after that administrator is deleted).
 * Never throws: a container with a bad bootstrap setting still serves.
 */
export async function bootstrapAdministrator(
  ctx: AccountContext,
  settings: { username?: string; email?: string; password?: string },
): Promise<Account | undefined> {
  if (!settings.username || !settings.password) return undefined;
  try {
    if (await ctx.table.get(BOOTSTRAP_MARKER)) return undefined;
    const now = ctx.now().toISOString();
    const marker: TransactItem = {
      Put: {
        Item: { ...BOOTSTRAP_MARKER, created_at: now },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
    if (await ctx.accounts.anyAdmin()) {
      await ctx.table.transact([marker]).catch(() => undefined);
      return undefined;
    }
    const passwordHash = await hashPassword(settings.password);
    const account = await ctx.accounts.create(
      {
        username: settings.username,
        email: settings.email ?? null,
        emailVerified: false,
        role: 'admin',
        passwordHash,
      },
      [marker],
    );
    log.info('bootstrap administrator created', { username: account.username });
    return account;
  } catch (error) {
    if (error instanceof AppError && error.errorName === 'conflict') {
      log.info('bootstrap administrator not created', { reason: error.message });
      return undefined;
    }
    log.error('bootstrap administrator failed', { error_name: (error as Error)?.name });
    return undefined;
  }
}
