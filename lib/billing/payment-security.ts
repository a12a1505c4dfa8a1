// What a payment settings change asks of the account domain (docs/PAYMENTS-GUIDE.md, "Who may change keys and
// gateway addresses"): the acting administrator's password, re-entered, before a key, a gateway URL or the
// mock cashier's switch changes; and after a gateway URL changed, a security event on the actor's account
// and a notice to every administrator, so a hijacked session cannot quietly point a channel, and the
// merchant key its queries carry, at a host of its choosing.
import type { ClientInfo } from '#lib/accounts/client.ts';
import type { Account } from '#lib/accounts/model.ts';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import type { RequestLimits } from '#lib/accounts/request-limits.ts';
import type { SecurityEvents } from '#lib/accounts/security-events.ts';
import { errors } from '#lib/core/errors.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { paymentGatewayNoticeMail } from '#lib/platform/mail/templates.ts';

/** Who asks for a settings change: the administrator's account as read while authenticating, and the client. */
export interface SettingsActor {
  account: Account;
  client: ClientInfo;
}

/** One gateway URL field that changed, and the host (origin) it now names; null when it was cleared. */
export interface GatewayChange {
  field: string;
  host: string | null;
}

export interface PaymentSecurityDeps {
  table: Table;
  accounts: Pick<AccountRepository, 'administrators'>;
  events: Pick<SecurityEvents, 'record'>;
  mailer: Mailer;
  /**
   * The account domain's password check, with its per-account budget, given by the one function that
   * changes settings (functions/payments/deps.ts): it hashes with argon2, which the functions that only
   * settle (callbacks, the reconciler) neither ship nor name.
   */
  passwords: Pick<RequestLimits, 'requirePassword'>;
}

export class PaymentSecurity {
  constructor(private readonly deps: PaymentSecurityDeps) {}

  /** 400 naming `current_password` when it is absent or not the actor's password (throttled per account). */
  async requirePassword(actor: Account, password: string | undefined): Promise<void> {
    if (password === undefined || password === '') {
      throw errors.badRequest(
        'current_password: is required to change a key, a gateway URL or the mock cashier',
      );
    }
    await this.deps.passwords.requirePassword(actor, password, 'current_password');
  }

  /**
   * After the change is saved: the actor's security event and a notice to every administrator with an
   * address (the actor too: a stolen session's owner learns of it). Neither can undo the change, so neither
   * throws.
   */
  async gatewayChanged(actor: SettingsActor, changes: GatewayChange[]): Promise<void> {
    const at = this.deps.table.clock();
    const administrators = await this.deps.accounts.administrators().catch((error: unknown) => {
      log.error('payment gateway notice: administrators not read', { error_name: (error as Error)?.name });
      return [] as Account[];
    });
    await Promise.all([
      this.deps.events.record(actor.account.id, 'payment_gateway_changed', actor.client),
      ...administrators
        .filter((admin) => admin.status === 'active' && typeof admin.email === 'string' && admin.email !== '')
        .map((admin) =>
          this.deps.mailer
            .send(
              paymentGatewayNoticeMail(admin.email!, {
                actor: actor.account.username,
                changes,
                at,
                ip: actor.client.ip,
              }),
            )
            .catch((error: unknown) => {
              log.warn('notice mail not sent', {
                subject: 'payment gateway changed',
                account_id: admin.id,
                error_name: (error as Error)?.name,
              });
            }),
        ),
    ]);
  }
}
