// Password change (authenticated) and reset by e-mail code or link (docs/SPEC.md 4.1 rules 3-4, docs/DESIGN.md
// 10). Both end every session of the account (the session epoch moves in the same update as the hash); a
// reset also revokes every API token and device token (their epochs move too) and removes every passkey,
// then signs the owner in. Both send a notice mail.
import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '#lib/core/errors.ts';
import {
  ConditionFailedError,
  conditionFailedAs,
  epochSeconds,
  type Item,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { codeMail } from '#lib/platform/mail/templates.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ApiTokenService } from './api-tokens.ts';
import type { Challenges } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import type { CodeFlowDeps } from './code-mail.ts';
import { CODE_TTL_SECONDS, codeKey, invalidCode } from './codes.ts';
import type { DecoyAccount } from './decoy.ts';
import type { DeviceTokens } from './device-tokens.ts';
import { sameAddress } from './identifiers.ts';
import type { AccountLimits } from './limits.ts';
import { loginAnswer } from './login.ts';
import { guardKey, guardSubject, type LoginGuard } from './login-guard.ts';
import type { Account } from './model.ts';
import type { PasskeyStore } from './passkey-store.ts';
import { hashPassword } from './passwords.ts';
import { accountChanged } from './repository.ts';
import type { SecurityChanges } from './security-changes.ts';
import type { SecurityEvents } from './security-events.ts';
import { type SessionService, sessionAnswer } from './sessions.ts';

/** The one error of /auth/password/reset for an unknown address and a wrong code alike (docs/SPEC.md 4.1 rule 4). */
export const resetRefused = () => invalidCode('email or code is invalid or expired');

/** Reset links: `{base_url}/#/reset?token=…`, one random token per mail, stored as a digest. */
export const resetLinkKey = (token: string) => ({
  pk: `reset-link#${createHash('sha256').update(token).digest('hex')}`,
  sk: 'link',
});

interface ResetLinkItem extends Item {
  pk: string;
  sk: string;
  /** The address the link went to (lower-case). */
  target: string;
  account_id?: string;
  /** The account's session epoch when mailed: any reset (or password change) moves it, ending every link. */
  sep?: number;
  expires_at: number;
}

export interface PasswordChangesDeps extends CodeFlowDeps {
  mailer: Mailer;
  decoy: DecoyAccount;
  sessions: SessionService;
  apiTokens: Pick<ApiTokenService, 'deleteAll'>;
  changes: SecurityChanges;
  /** A reset removes the passkeys, then signs the owner in (its session, device token and event). */
  passkeys: Pick<PasskeyStore, 'list' | 'deletions'>;
  devices: DeviceTokens;
  events: SecurityEvents;
  challenges: Pick<Challenges, 'issue'>;
  guard: Pick<LoginGuard, 'reset'>;
  limits: Pick<AccountLimits, 'resetCodeMinMs'>;
  /** `base_url`: the console's address, which reset links open. */
  baseUrl: string;
}

export class PasswordChanges {
  constructor(private readonly deps: PasswordChangesDeps) {}

  /** POST /auth/password `{current_password, new_password}`: answers a fresh session (the old ones end). */
  async change(
    account: Account,
    input: { current_password: string; new_password: string },
    client: ClientInfo,
  ) {
    await this.deps.requestLimits.requirePassword(account, input.current_password, 'current_password');
    if (input.new_password === input.current_password) {
      throw errors.badRequest('new_password: must differ from the current password');
    }
    const passwordHash = await hashPassword(input.new_password);
    const updated = await this.deps.accounts
      .changePasswordHash(account, passwordHash)
      .catch(conditionFailedAs(accountChanged));
    const [session] = await Promise.all([
      sessionAnswer(this.deps.sessions, updated, client),
      this.deps.changes.record(updated, 'password_changed', client, { kind: 'password_changed' }),
    ]);
    return session;
  }

  /**
   * POST /auth/password/reset/code `{email}`: the same answer, after the same table work, whether or not
   * the address belongs to a verified account; a code and a link are mailed only when it does (otherwise
   * an unusable code and link bound to no account are stored, as real ones would be). Each mail's link
   * works for 10 minutes, until any reset of the account: a later send replaces the code, never the
   * links, so whoever asks for codes to burn them only delivers working links to the owner. The answer waits until `resetCodeMinMs`
   * has passed, so the mail round trip does not show either. The per-address throttle applies to every
   * address, so a 429 does not tell.
   */
  async sendResetCode(input: { email: string }, client: ClientInfo) {
    const { table, accounts, codes, mailer, decoy, limits } = this.deps;
    const started = performance.now();
    await this.deps.requestLimits.limitIp(client.ip);
    await this.deps.codeMail.limit(
      'reset',
      input.email.trim().toLowerCase(),
      'Too many codes sent to this address; try again later',
    );
    const answer = { expires_at: isoWithOffset(new Date(table.clock().getTime() + CODE_TTL_SECONDS * 1000)) };
    const accountId = await accounts.ownerOf(input.email);
    // Nobody by that address: the decoy account is read instead, an item of the same size (decoy.ts).
    const found = accountId ? await accounts.get(accountId) : await decoy.read().then(() => undefined);
    const eligible =
      found !== undefined &&
      found.status === 'active' &&
      found.email_verified &&
      sameAddress(found.email, input.email);
    const linkToken = randomBytes(32).toString('base64url');
    const link: ResetLinkItem = {
      ...resetLinkKey(linkToken),
      target: input.email.trim().toLowerCase(),
      ...(eligible ? { account_id: found.id, sep: found.session_epoch } : {}),
      expires_at: epochSeconds(table.clock()) + CODE_TTL_SECONDS,
    };
    const [{ code }] = await Promise.all([
      codes.issue('reset', input.email, {
        target: input.email,
        ...(eligible ? { accountId: found.id } : {}),
      }),
      table.put(link),
    ]);
    try {
      if (eligible) {
        const url = `${this.deps.baseUrl}/#/reset?token=${linkToken}`;
        await mailer.send(codeMail('reset', found.email!, code, CODE_TTL_SECONDS / 60, url));
      }
    } finally {
      // Also when the mail fails: the 503 then comes no sooner than any other answer.
      const wait = limits.resetCodeMinMs - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
    return answer;
  }

  /**
   * POST /auth/password/reset `{email, code, new_password}` or `{token, new_password}` (a mailed link). Of
   * concurrent resets of one account exactly one succeeds: each is a transaction conditioned on the code
   * or on the account's session epoch the link was mailed at, which every reset moves.
   *
   * A completed reset signs the owner in (docs/ACCOUNTS.md "Password reset by code or link"): a session and
   * a new device token, or the second-factor challenge when TOTP is on, as a login would answer; and it
   * clears the account's password guard. So whoever keeps the guard closed cannot keep out an owner who
   * reads their mail.
   */
  async reset(
    input: {
      email?: string | undefined;
      code?: string | undefined;
      token?: string | undefined;
      new_password: string;
    },
    client: ClientInfo,
  ) {
    const { accounts } = this.deps;
    await this.deps.requestLimits.limitIp(client.ip);
    // Hashed first, so known and unknown addresses cost the same work.
    const passwordHash = await hashPassword(input.new_password);
    const { account, spend } =
      input.token !== undefined
        ? await this.byLink(input.token)
        : await this.byCode(input.email ?? '', input.code ?? '');
    const reset = await this.commit(account, passwordHash, spend);
    await accounts.syncLoginCopies(reset, { username: reset.username, password_hash: passwordHash });
    // The token epoch moved with the password: every token is already refused. Deleting the items tidies
    // the token list.
    await Promise.all([
      this.deps.apiTokens.deleteAll(reset.id).catch((error: unknown) => {
        log.warn('revoked API tokens not deleted', {
          account_id: reset.id,
          error_name: (error as Error)?.name,
        });
      }),
      this.deps.changes.record(reset, 'password_reset', client, { kind: 'password_reset' }),
    ]);
    const subject = guardSubject(reset.username, reset.username);
    if (reset.totp_enabled) {
      // Answered from a second-factor budget of its own (a digest no device token has), as a device
      // token's login is: whoever spent the account's with the old password does not hold the owner here.
      const [challenge] = await Promise.all([
        this.deps.challenges.issue(reset, randomBytes(32).toString('hex')),
        this.deps.guard.reset(subject),
      ]);
      return challenge;
    }
    return loginAnswer(this.deps, reset, client, {
      alsoDelete: [guardKey(subject)],
      method: 'password_reset',
    });
  }

  /** A mailed link: the account it was mailed for, while still at the session epoch it was mailed at. */
  private async byLink(token: string): Promise<{ account: Account; spend: Spend }> {
    const { table, accounts } = this.deps;
    const key = resetLinkKey(token);
    const link = await table.get<ResetLinkItem>(key);
    const account = link?.account_id ? await accounts.get(link.account_id) : undefined;
    const resettable = (candidate: Account | undefined): candidate is Account =>
      !!link &&
      !!candidate?.email &&
      sameAddress(candidate.email, link.target) &&
      candidate.session_epoch === link.sep;
    if (!resettable(account)) throw resetRefused();
    const items: TransactItem[] = [
      { Delete: { Key: key, ConditionExpression: 'attribute_exists(pk)' } },
      // The live code ends with the links.
      { Delete: { Key: codeKey('reset', account.email!) } },
    ];
    return { account, spend: { items, sessionEpoch: link!.sep, resettable } };
  }

  /** A code: one attempt spent on it, then the account it was mailed for. */
  private async byCode(email: string, code: string): Promise<{ account: Account; spend: Spend }> {
    const checked = await this.deps.codes.check('reset', email, code, { target: email, error: resetRefused });
    const account = checked.item.account_id
      ? await this.deps.accounts.get(checked.item.account_id)
      : undefined;
    const resettable = (candidate: Account | undefined): candidate is Account =>
      !!candidate?.email && sameAddress(candidate.email, email);
    if (!resettable(account)) throw resetRefused();
    // The session epoch moves with it: every link mailed so far stops working.
    return { account, spend: { items: [checked.consume], resettable } };
  }

  /**
   * The reset's one transaction: the account's update (conditioned on its passkey count as read), the
   * code's or link's consumption, and the deletes of every passkey with its pointer (a reset removes them:
   * one may be an intruder's). The passkeys are listed after the account was read, so one added between
   * the two fails the count's condition; that failure, or a conflict with a concurrent write, reads the
   * account again and retries while no other reset (or password change) happened meanwhile.
   */
  private async commit(first: Account, passwordHash: string, spend: Spend): Promise<Account> {
    const { table, accounts, passkeys } = this.deps;
    let account = first;
    for (let attempt = 1; ; attempt++) {
      const held = await passkeys.list(account.id);
      try {
        await table.transact([
          accounts.resetPasswordItem(account, passwordHash, spend.sessionEpoch),
          ...spend.items,
          ...passkeys.deletions(
            account.id,
            held.map((passkey) => passkey.credential_id),
          ),
        ]);
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        const fresh = attempt < 3 ? await accounts.get(account.id) : undefined;
        if (!spend.resettable(fresh) || fresh.session_epoch !== account.session_epoch) throw resetRefused();
        account = fresh;
        continue;
      }
      const next = (epoch: number | undefined) => (epoch ?? 0) + 1;
      return {
        ...account,
        password_hash: passwordHash,
        session_epoch: next(account.session_epoch),
        token_epoch: next(account.token_epoch),
        device_epoch: next(account.device_epoch),
        passkey_count: 0,
      };
    }
  }
}

/** What a reset by code or by link spends, and which account it may still reset. */
interface Spend {
  items: TransactItem[];
  /** A link's: the account's session epoch when mailed. */
  sessionEpoch?: number | undefined;
  resettable: (account: Account | undefined) => account is Account;
}
