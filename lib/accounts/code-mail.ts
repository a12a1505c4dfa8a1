// One-time codes by mail: the per-subject send limit (docs/SPEC.md 8), the stored code, and its mail.
import type { Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { CODE_TTL_SECONDS, type CodePurpose, type CodeStore } from './codes.ts';
import type { AccountLimits } from './limits.ts';
import type { AccountRepository } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { Throttle } from './throttle.ts';

/** What every flow that mails a code and later consumes it needs. */
export interface CodeFlowDeps {
  /** The flow's transactions: the code consumed together with the writes it allows. */
  table: Table;
  accounts: AccountRepository;
  codes: CodeStore;
  codeMail: CodeMail;
  requestLimits: RequestLimits;
}

export interface CodeMailDeps {
  codes: CodeStore;
  throttle: Throttle;
  mailer: Mailer;
  limits: Pick<AccountLimits, 'codeSend'>;
}

export class CodeMail {
  constructor(private readonly deps: CodeMailDeps) {}

  /** One send of `purpose` for `limitKey` (an address, or an account id), or 429 with `tooMany`. */
  async limit(purpose: CodePurpose, limitKey: string, tooMany: string): Promise<void> {
    await this.deps.throttle.consume(`code-send#${purpose}#${limitKey}`, this.deps.limits.codeSend, tooMany);
  }

  /** A new code of (purpose, subject), mailed to `to`; the answer names its expiry. */
  async send(
    purpose: CodePurpose,
    subject: string,
    to: string,
    options: { limitKey: string; tooMany: string; accountId?: string },
  ) {
    await this.limit(purpose, options.limitKey, options.tooMany);
    const { code, expiresAt } = await this.deps.codes.issue(purpose, subject, {
      target: to,
      ...(options.accountId ? { accountId: options.accountId } : {}),
    });
    await this.deps.mailer.send(codeMail(purpose, to, code, CODE_TTL_SECONDS / 60));
    return { expires_at: isoWithOffset(expiresAt) };
  }
}
