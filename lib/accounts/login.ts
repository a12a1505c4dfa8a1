// Login at the two doors (docs/SPEC.md 3.2, 5; docs/DESIGN.md 5, 10): ordinary users at /auth/login, administrators
// at /admin/auth/login. Every refusal is the same 401 after the same work, known account or not: the same
// reads (identifier claim, account item or the decoy), the same guard write before the hash, one hash, and
// one write after a failure (the account's `login_failed` event, or the unknown identifier's guard).

import { errors } from '#lib/core/errors.ts';
import { shardOf } from '#lib/platform/db/shards.ts';
import { conditionFailedReturns, type Key, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { cancelDeletion } from './account-deletion.ts';
import type { Challenges } from './challenge.ts';
import type { ClientInfo } from './client.ts';
import { DECOY_COPIES, type DecoyAccount } from './decoy.ts';
import { type DeviceTokens, deviceKey, type PresentedDevice } from './device-tokens.ts';
import { guardKey, guardSubject, type LoginGuard } from './login-guard.ts';
import type { Account, Role } from './model.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { type AccountRepository, publicAccount } from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { LoginMethod, SecurityEvents } from './security-events.ts';
import { SESSION_PREFIX, type SessionService } from './sessions.ts';

export interface LoginDeps {
  /** The batch of the session, the event and the guard's reset. */
  table: Table;
  accounts: AccountRepository;
  decoy: DecoyAccount;
  guard: LoginGuard;
  devices: DeviceTokens;
  requestLimits: RequestLimits;
  events: SecurityEvents;
  sessions: SessionService;
  challenges: Pick<Challenges, 'issue'>;
}

/**
 * A successful login's answer (docs/DESIGN.md 5, docs/ACCOUNTS.md "Device tokens"): a session and a new
 * device token, written in one batch with the `login` event; `replaces` names the device token the login
 * presented, which the new one replaces.
 */
export async function loginAnswer(
  deps: Pick<LoginDeps, 'table' | 'sessions' | 'events' | 'devices'>,
  account: Account,
  client: ClientInfo,
  options: { replaces?: string | undefined; alsoDelete?: Key[]; method?: LoginMethod } = {},
) {
  // A deletion pending in its grace ends with this login (nothing to do, nothing read, when none is).
  if (account.deletion_scheduled_for) await cancelDeletion(deps.table, account);
  const { issued, item } = await deps.sessions.prepare(account, client);
  const device = deps.devices.prepare(account, item.sk.slice(SESSION_PREFIX.length));
  await deps.table.writeBatch(
    [
      item,
      device.item,
      deps.events.item(account.id, 'login', client, { method: options.method ?? 'password' }),
    ],
    [...(options.replaces ? [deviceKey(account.id, options.replaces)] : []), ...(options.alsoDelete ?? [])],
  );
  return { ...issued, device_token: device.token, user: publicAccount(account) };
}

/**
 * The account id whose device tokens a login naming nobody tries: no account has it. One of DECOY_COPIES
 * by the token presented, so a flood of unknown names with tokens spreads over as many partitions as the
 * decoy's own reads do, never one.
 */
const nobodyFor = (token: string): string => `decoy#${shardOf(token, DECOY_COPIES)}`;

export class Login {
  constructor(private readonly deps: LoginDeps) {}

  /**
   * `username` takes a username or an e-mail; both live in one namespace, usernames claimed first.
   *
   * The waits (docs/PERFORMANCE.md "Waits on the critical path"): before the hash one, the per-address limit beside the claim read
   * (which carries the account's username and a copy of its password hash) and, for a username, the guessing
   * guard's slot (keyed by the username, so it needs nothing read); a login by e-mail takes its slot in a
   * second wait, once the claim named the username. The account item is read beside the hash (the authority:
   * status, role, session epoch, and the hash itself, verified again when the copy differs). After the hash
   * one write: the guard's reset, the session and the `login` event in one batch; or, for a failure, the
   * `login_failed` event (or the unknown identifier's guard).
   *
   * With `device_token` (docs/ACCOUNTS.md "Device tokens") the guard's slot waits for the token: the claim,
   * then the account (the decoy for nobody) beside the token's own slot, then the guard's slot only if the
   * token is not a live one of this account. A live token's login leaves the account's guard untouched and
   * its answer replaces the token.
   */
  async login(
    door: Role,
    input: { username: string; password: string; device_token?: string | undefined },
    client: ClientInfo,
  ) {
    const { accounts, decoy, guard, devices, events } = this.deps;
    const identifier = input.username;
    const presented = input.device_token;
    const byUsername = !identifier.includes('@');
    // A login that presents a device token takes no slot of the account's guard before it knows whether
    // the token is live: its own guard may hold it instead.
    const earlySubject =
      byUsername && presented === undefined ? guardSubject(undefined, identifier) : undefined;
    // A refusal of the per-address limit still stops the login before any hash work.
    const [, claim, earlyAdmission] = await Promise.all([
      this.deps.requestLimits.limitIp(client.ip),
      accounts.claimOf(identifier),
      earlySubject ? guard.admit(earlySubject) : undefined,
    ]);
    // For nobody the decoy account (decoy.ts; read once per container, then remembered): the account's
    // read runs beside the hash, so its wait does not show either way.
    const accountRead: Promise<Account | undefined> = claim
      ? accounts.get(claim.account_id)
      : decoy.read().then(() => undefined);
    accountRead.catch(() => {});
    let username = claim?.username;
    let copy = claim?.password_hash;
    let device: PresentedDevice | undefined;
    if (presented !== undefined) {
      // The token decides which guard holds this login, so the account is read first (the decoy for
      // nobody: the same wait), beside the token's own slot.
      // For nobody the same conditional update, on a partition no account has: the same wait either way.
      const [account, taken] = await Promise.all([
        accountRead,
        devices.take(claim ? claim.account_id : nobodyFor(presented), presented),
      ]);
      if (taken && devices.belongsTo(taken, account)) device = taken;
      if (account) {
        username = account.username;
        copy = account.password_hash;
      }
    } else if (claim && (username === undefined || copy === undefined)) {
      // A claim from before the copy existed: the account first (it gets the copy on success).
      const account = await accountRead;
      username = account?.username;
      copy = account?.password_hash;
    }
    const subject = guardSubject(username, identifier);
    if (!device) {
      const admission =
        earlyAdmission && subject === earlySubject ? earlyAdmission : await guard.admit(subject);
      if (!admission.admitted) {
        throw errors.tooManyRequests(
          admission.retryAfterSeconds,
          'Too many failed logins for this account; try again later',
        );
      }
    }
    // Always one full verification of a stored hash (the decoy's for nobody; lib/accounts/passwords.ts's dummy
    // if even that is missing).
    const hash = claim ? copy : await decoy.hash();
    let valid = await verifyPassword(hash, input.password);
    // Awaited for nobody as well (the decoy's read): the same work either way.
    const account = await accountRead;
    // The copy is behind the account (a password changed since): the account's own hash decides.
    if (account && account.password_hash !== hash)
      valid = await verifyPassword(account.password_hash, input.password);
    // The wrong door is a failure like a wrong password, in every respect. A device token keeps the slot
    // it took: that failure is counted against it.
    if (!account || !valid || account.role !== door) {
      await (account
        ? events.record(account.id, 'login_failed', client)
        : guard.recordUnknownFailure(subject, client));
      throw errors.unauthorized('Invalid username or password');
    }
    // Only a caller who knows the password learns that the account is disabled.
    if (account.status !== 'active') {
      if (!device) await guard.reset(subject);
      throw errors.forbidden('account disabled');
    }
    const stale = claim!.username !== account.username || claim!.password_hash !== account.password_hash;
    await Promise.all([
      needsRehash(account.password_hash) ? this.rehash(account, input.password) : undefined,
      this.indexIdentifiers(account),
      // Claims from before the copy, or behind a password change: brought up to date, once.
      stale && !needsRehash(account.password_hash)
        ? accounts.syncLoginCopies(account, account, [identifier])
        : undefined,
    ]);
    // A login held by its device token leaves the account's guard as it is: whoever is guessing stays
    // held there, and the owner's login does not open it for them again.
    if (account.totp_enabled) {
      const [, , challenge] = await Promise.all([
        device ? undefined : guard.reset(subject),
        device ? devices.passed(account.id, device.digest) : undefined,
        this.deps.challenges.issue(account, device?.digest),
      ]);
      return challenge;
    }
    // The session is written only after the password verified: a wrong guess never costs a session write.
    return loginAnswer(this.deps, account, client, {
      replaces: device?.digest,
      alsoDelete: device ? [] : [guardKey(subject)],
    });
  }

  /** Re-hashes with the current parameters; only if nobody changed the password meanwhile. */
  private async rehash(account: Account, password: string): Promise<void> {
    const fresh = await hashPassword(password);
    const rehashed = await this.deps.accounts
      .rehashPassword(account.id, account.password_hash, fresh)
      .then(() => true, conditionFailedReturns(false));
    if (rehashed) account.password_hash = fresh;
    else log.info('password re-hash skipped: the password changed meanwhile', { account_id: account.id });
  }

  /** Accounts made before the back-office search index join it on their next login (once). */
  private async indexIdentifiers(account: Account): Promise<void> {
    if (account.ident_indexed) return;
    try {
      await this.deps.accounts.indexIdentifiers(account);
    } catch (error) {
      log.warn('identifier index not updated', {
        account_id: account.id,
        error_name: (error as Error)?.name,
      });
    }
  }
}
