// Self-registration with an e-mail code (docs/SPEC.md 3.1, 4.1) and the two ways administrators come to be:
// bootstrap configuration (once) and the back office. Registration never creates an administrator.

import { AppError, errors } from '#lib/core/errors.ts';
import { ConditionFailedError, type TransactItem } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { ClientInfo } from './client.ts';
import type { CodeFlowDeps } from './code-mail.ts';
import { invalidCode } from './codes.ts';
import type { Account } from './model.ts';
import { hashPassword } from './passwords.ts';
import { accountChanged, type NewAccount, publicAccount } from './repository.ts';

export const emailInUse = () => errors.conflict('email: is already in use');

export const BOOTSTRAP_MARKER = { pk: 'settings#admin-bootstrap', sk: 'settings' };

export class Registration {
  constructor(private readonly deps: CodeFlowDeps) {}

  /** POST /auth/register/code `{email}`: 409 when the address is anyone's e-mail or username. */
  async sendCode(input: { email: string }, client: ClientInfo) {
    await this.deps.requestLimits.limitIp(client.ip);
    if (await this.deps.accounts.ownerOf(input.email)) throw emailInUse();
    return this.deps.codeMail.send('register', input.email, input.email, {
      limitKey: input.email.trim().toLowerCase(),
      tooMany: 'Too many codes sent to this address; try again later',
    });
  }

  /** POST /auth/register: an ordinary user, e-mail verified, the code consumed in the same transaction. */
  async register(
    input: { username: string; email: string; code: string; password: string },
    client: ClientInfo,
  ) {
    await this.deps.requestLimits.limitIp(client.ip);
    await this.assertFree(input);
    const checked = await this.deps.codes.check('register', input.email, input.code, { target: input.email });
    const passwordHash = await hashPassword(input.password);
    const account = await this.create(
      { username: input.username, email: input.email, emailVerified: true, role: 'user', passwordHash },
      [checked.consume],
      () => invalidCode(),
    );
    return publicAccount(account);
  }

  /**
   * A new administrator (the back office after re-authentication; the admin:create script, which runs with
   * table access and no session).
   */
  async createAdministrator(input: { username: string; email: string; password: string }) {
    await this.assertFree(input);
    const passwordHash = await hashPassword(input.password);
    // The address was typed by someone else: the new administrator verifies it (docs/ACCOUNTS.md).
    const account = await this.create(
      { username: input.username, email: input.email, emailVerified: false, role: 'admin', passwordHash },
      [],
      accountChanged,
    );
    return publicAccount(account);
  }

  /**
   * Creates the configured administrator once, if no administrator exists. Race-safe across containers:
   * the account, its claims and a marker item are one transaction, so exactly one container succeeds and
   * the marker stops any later start from creating it again (even after that administrator is deleted).
   * Never throws: a container with a bad bootstrap setting still serves.
   */
  async bootstrapAdministrator(settings: {
    username?: string;
    email?: string;
    password?: string;
  }): Promise<Account | undefined> {
    if (!settings.username || !settings.password) return undefined;
    const { table, accounts } = this.deps;
    try {
      if (await table.get(BOOTSTRAP_MARKER)) return undefined;
      const marker: TransactItem = {
        Put: {
          Item: { ...BOOTSTRAP_MARKER, created_at: table.clock().toISOString() },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
      if (await accounts.anyAdmin()) {
        await table.transact([marker]).catch(() => undefined);
        return undefined;
      }
      const passwordHash = await hashPassword(settings.password);
      const account = await accounts.create(
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

  /** 409 when either identifier is anyone's username or e-mail (one namespace). */
  private async assertFree(input: { username: string; email: string }): Promise<void> {
    const [usernameOwner, emailOwner] = await Promise.all([
      this.deps.accounts.ownerOf(input.username),
      this.deps.accounts.ownerOf(input.email),
    ]);
    if (usernameOwner) throw errors.conflict('username: is already taken');
    if (emailOwner) throw emailInUse();
  }

  /**
   * Creates the account in one transaction with its identifier claims and the consumption of `extra`
   * (e.g. the registration code). A pure transaction conflict (a concurrent writer of the same items) is
   * retried, so the loser learns the real reason (name taken, code used) instead of a vague conflict.
   */
  private async create(input: NewAccount, extra: TransactItem[], onExtraFailed: () => AppError) {
    const extraFrom = input.email ? 3 : 2;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.accounts.create(input, extra);
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        if (error.failedItems.some((index) => index >= extraFrom)) throw onExtraFailed();
        if (error.failedItems.length > 0 || attempt >= 3) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      }
    }
  }
}
