// What follows every security change: its event in the account's history and, when it has one, a notice
// mail to the owner. Neither can undo the change, so neither throws.
import type { Clock } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mail, Mailer } from '#lib/platform/mail/mailer.ts';
import { type SecurityNoticeKind, securityNoticeMail } from '#lib/platform/mail/templates.ts';
import type { ClientInfo } from './client.ts';
import type { Account } from './model.ts';
import type { SecurityEvents, SecurityEventType } from './security-events.ts';

export interface SecurityNotice {
  kind: SecurityNoticeKind;
  newEmail?: string;
  remaining?: number;
  /** Another address than the account's verified one (the old address of an e-mail change). */
  to?: string;
}

export interface SecurityChangesDeps {
  events: SecurityEvents;
  mailer: Mailer;
  clock: Clock;
}

export class SecurityChanges {
  constructor(private readonly deps: SecurityChangesDeps) {}

  /**
   * The change's event, and its notice mail to the account's verified address (an unverified one may not be
   * the owner's), naming the time and source address.
   */
  async record(
    account: Account,
    type: SecurityEventType,
    client: ClientInfo,
    notice?: SecurityNotice,
  ): Promise<void> {
    const to = notice?.to ?? (account.email_verified ? account.email : null);
    await Promise.all([
      this.deps.events.record(account.id, type, client),
      notice && to
        ? this.sendNotice(
            securityNoticeMail(notice.kind, to, {
              username: account.username,
              at: this.deps.clock(),
              ip: client.ip,
              ...(notice.newEmail ? { newEmail: notice.newEmail } : {}),
              ...(notice.remaining === undefined ? {} : { remaining: notice.remaining }),
            }),
          )
        : undefined,
    ]);
  }

  /** Mail whose failure must not undo what already happened (a change notice): logged, not thrown. */
  private async sendNotice(mail: Mail): Promise<void> {
    try {
      await this.deps.mailer.send(mail);
    } catch (error) {
      log.warn('notice mail not sent', { subject: mail.subject, error_name: (error as Error)?.name });
    }
  }
}
