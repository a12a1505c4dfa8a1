// E-mail binding, rebinding and unbinding (docs/SPEC.md 3.1, 4.1 rule 6, 6.2; docs/DESIGN.md 10). Binding and
// unbinding always need the current password: an address bound is an address that can reset the password.

import { errors } from '#lib/core/errors.ts';
import { conditionFailedAs, type TransactItem } from '#lib/platform/db/table.ts';
import type { ClientInfo } from './client.ts';
import type { CodeFlowDeps } from './code-mail.ts';
import { releaseItem, sameAddress } from './identifiers.ts';
import type { Account } from './model.ts';
import { accountChanged, publicAccount } from './repository.ts';
import type { SecurityChanges } from './security-changes.ts';

const boundElsewhere = () => errors.conflict('email: is already bound to another account');

export interface EmailBindingDeps extends CodeFlowDeps {
  changes: SecurityChanges;
}

export class EmailBinding {
  constructor(private readonly deps: EmailBindingDeps) {}

  /** POST /auth/email/code `{email}`: a binding code to the target address, throttled per account. */
  async sendCode(account: Account, input: { email: string }) {
    await this.assertFree(account, input.email);
    if (account.email_verified && sameAddress(account.email, input.email)) {
      throw errors.badRequest('email: is already the verified e-mail of this account');
    }
    return this.deps.codeMail.send('email_bind', account.id, input.email, {
      limitKey: account.id,
      tooMany: 'Too many codes sent; try again later',
      accountId: account.id,
    });
  }

  /**
   * POST /auth/email/verify `{email, code, password}`: binds and verifies, always with the current password
   * (also when no verified address is bound yet: administrators start with an unverified one). Changing a
   * verified address sends a notice to the old address.
   */
  async verify(
    account: Account,
    input: { email: string; code: string; password: string },
    client: ClientInfo,
  ) {
    await this.assertFree(account, input.email);
    await this.deps.requestLimits.requirePassword(account, input.password);
    const changingVerified =
      account.email_verified && !!account.email && !sameAddress(account.email, input.email);
    const checked = await this.deps.codes.check('email_bind', account.id, input.code, {
      target: input.email,
    });
    const now = this.deps.table.clock().toISOString();
    const items: TransactItem[] = [this.deps.accounts.emailChangeItem(account, input.email, true, now)];
    let claimIndex = -1;
    if (!sameAddress(account.email, input.email)) {
      claimIndex = items.push(this.deps.accounts.claimItem(input.email, account.id, 'email', account)) - 1;
      if (account.email) items.push(releaseItem(account.email, account.id));
    }
    const consumeIndex = items.push(checked.consume) - 1;
    await this.deps.table.transact(items).catch(
      conditionFailedAs(({ failedItems }) => {
        if (failedItems.includes(claimIndex)) return boundElsewhere();
        if (failedItems.includes(consumeIndex)) return errors.badRequest('code: is invalid or expired');
        return accountChanged();
      }),
    );
    if (!sameAddress(account.email, input.email)) {
      await this.deps.changes.record(account, 'email_changed', client, {
        kind: 'email_changed',
        newEmail: input.email,
        // The old address hears of it only if it was verified as the owner's.
        ...(changingVerified && account.email ? { to: account.email } : {}),
      });
    }
    return publicAccount({ ...account, email: input.email, email_verified: true, updated_at: now });
  }

  /** POST /auth/email/unbind `{password}`. */
  async unbind(account: Account, input: { password: string }, client: ClientInfo) {
    await this.deps.requestLimits.requirePassword(account, input.password);
    if (!account.email) throw errors.conflict('No e-mail is bound to this account');
    await this.deps.table
      .transact([
        this.deps.accounts.emailChangeItem(account, null, false, this.deps.table.clock().toISOString()),
        releaseItem(account.email, account.id),
      ])
      .catch(conditionFailedAs(accountChanged));
    await this.deps.changes.record(account, 'email_changed', client, { kind: 'email_changed' });
    return publicAccount({ ...account, email: null, email_verified: false });
  }

  private async assertFree(account: Account, email: string): Promise<void> {
    const owner = await this.deps.accounts.ownerOf(email);
    if (owner && owner !== account.id) throw boundElsewhere();
  }
}
