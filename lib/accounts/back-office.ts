// The back office's account endpoints (docs/DESIGN.md 5, 10): create an administrator (after re-entering the
// acting administrator's password), search and list accounts, enable or disable one, reset its TOTP.

import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards } from '#lib/platform/db/shards.ts';
import { ConditionFailedError, conditionFailedAs, type Item, type Table } from '#lib/platform/db/table.ts';
import type { ClientInfo } from './client.ts';
import { type IdentifierKind, identifierListing } from './identifiers.ts';
import type { Account } from './model.ts';
import type { PasskeyStore } from './passkey-store.ts';
import type { Registration } from './registration.ts';
import {
  type AccountRepository,
  accountKey,
  fromAccountItem,
  type PublicAccount,
  publicAccount,
} from './repository.ts';
import type { RequestLimits } from './request-limits.ts';
import type { SecondFactorWrites } from './second-factor-writes.ts';
import type { SecurityChanges } from './security-changes.ts';
import type { AccountUsage, AccountUsageReader } from './usage.ts';

export interface AdminAccountView extends PublicAccount {
  status: Account['status'];
  /** Storage use (lib/files); null only where no usage reader is wired. */
  usage: AccountUsage | null;
}

const ACCOUNT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const notFound = () => errors.notFound('account: not found');

function adminView(account: Account, usage: AccountUsage | null = null): AdminAccountView {
  return { ...publicAccount(account), status: account.status, usage };
}

/** A claim as the listing index holds it: its keys, holder and kind. */
interface ClaimItem extends Item {
  pk: string;
  sk: string;
  account_id: string;
  kind: IdentifierKind;
}

export interface BackOfficeDeps {
  /** The search over the identifiers' listing. */
  table: Table;
  /** `listing_shards`: the identifiers' listing is read over this many shards. */
  listingShards: number;
  accounts: AccountRepository;
  registration: Pick<Registration, 'createAdministrator'>;
  requestLimits: RequestLimits;
  secondFactorWrites: SecondFactorWrites;
  /** The reset removes the account's passkeys too (docs/DESIGN.md 18). */
  passkeys: Pick<PasskeyStore, 'removeAll'>;
  changes: SecurityChanges;
  /** Storage use for the listing; without it listings answer `usage: null`. */
  usage: AccountUsageReader | undefined;
}

export class BackOffice {
  constructor(private readonly deps: BackOfficeDeps) {}

  /** POST /api/v1/admin/accounts `{username, email, password, current_password}`: a new administrator. */
  async createAdministrator(
    actor: Account,
    input: { username: string; email: string; password: string; current_password: string },
  ) {
    await this.deps.requestLimits.requirePassword(actor, input.current_password, 'current_password');
    return this.deps.registration.createAdministrator({
      username: input.username,
      email: input.email,
      password: input.password,
    });
  }

  /**
   * GET /api/v1/admin/accounts `?q=&cursor=&limit=`: accounts whose username or e-mail starts with `q`
   * (any case), in the order of the matching value; without `q`, every account by username. An account that
   * matches by both is listed once, at its username.
   */
  async list(request: { q?: string; limit: number; cursor?: string }): Promise<Page<AdminAccountView>> {
    const prefix = (request.q ?? '').trim().toLowerCase();
    const listing = identifierListing(this.deps.listingShards);
    let cursor = request.cursor;
    const listed: Account[] = [];
    do {
      // Every shard at once, merged in the order of the values (lib/platform/db/shards.ts). Without a
      // prefix, e-mail claims come too and are passed over below (each account is listed at its username).
      const page = await readShards<ClaimItem>(this.deps.table, listing, {
        // At most one account per claim: never more than the page still needs, so the cursor is exact.
        limit: request.limit - listed.length,
        cursor,
        order: 'oldest-first',
        ...(prefix ? { prefix } : {}),
      });
      const claims = page.items;
      const ids = [...new Set(claims.map((claim) => claim.account_id))];
      const found = ids.length > 0 ? await this.deps.table.getMany(ids.map(accountKey)) : [];
      const byId = new Map(
        found.flatMap((item) => {
          const account = fromAccountItem(item);
          return account ? [[account.id, account] as const] : [];
        }),
      );
      for (const claim of claims) {
        const account = byId.get(claim.account_id);
        if (!account) continue;
        if (claim.kind === 'email' && account.username.toLowerCase().startsWith(prefix)) continue;
        listed.push(account);
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor && listed.length < request.limit);
    const usage = await this.usageOf(listed);
    return {
      items: listed.map((account) => adminView(account, usage.get(account.id) ?? null)),
      next_cursor: cursor ?? null,
    };
  }

  private async accountById(id: string): Promise<Account> {
    const account = ACCOUNT_ID.test(id) ? await this.deps.accounts.get(id) : undefined;
    if (!account) throw notFound();
    return account;
  }

  /**
   * PATCH /api/v1/admin/accounts/{id} `{status, current_password?}`. A disabled account's sessions and API
   * tokens are refused on their next request (both read the account every time); disabling also ends its
   * sessions for good. Disabling an administrator needs the acting administrator's password, and never
   * leaves no active administrator (409).
   */
  async setStatus(
    actor: Account,
    id: string,
    input: { status: Account['status']; current_password?: string },
  ) {
    if (id === actor.id && input.status === 'disabled') {
      throw errors.badRequest('status: an administrator cannot disable their own account');
    }
    const target = await this.accountById(id);
    if (input.status === 'disabled' && target.role === 'admin') {
      await this.requireActorPassword(actor, input.current_password, 'disable an administrator');
      return this.view(await this.disableAdministrator(actor, target));
    }
    const updated = await this.deps.accounts.setStatus(id, input.status);
    if (!updated) throw notFound();
    return this.view(updated);
  }

  /**
   * One transaction: the administrator is disabled only while the acting administrator is still active
   * and an administrator, so whatever races (two administrators disabling each other at the same instant),
   * the last write leaves its actor active: never zero active administrators. The loser is 409.
   */
  private async disableAdministrator(actor: Account, target: Account): Promise<Account> {
    const now = this.deps.table.clock().toISOString();
    await this.deps.table
      .transact([
        {
          Update: {
            Key: accountKey(target.id),
            UpdateExpression:
              'SET #status = :disabled, updated_at = :now ADD session_epoch :one, device_epoch :one',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':disabled': 'disabled', ':now': now, ':one': 1 },
          },
        },
        {
          ConditionCheck: {
            Key: accountKey(actor.id),
            ConditionExpression: '#status = :active AND #role = :admin',
            ExpressionAttributeNames: { '#status': 'status', '#role': 'role' },
            ExpressionAttributeValues: { ':active': 'active', ':admin': 'admin' },
          },
        },
      ])
      .catch(
        conditionFailedAs(() => errors.conflict('status: the last active administrator cannot be disabled')),
      );
    const updated = await this.deps.accounts.get(target.id);
    if (!updated) throw notFound();
    return updated;
  }

  /** Re-authentication for acting on another administrator: 400 naming `current_password`. */
  private async requireActorPassword(actor: Account, password: string | undefined, what: string) {
    if (password === undefined || password === '') {
      throw errors.badRequest(`current_password: is required to ${what}`);
    }
    await this.deps.requestLimits.requirePassword(actor, password, 'current_password');
  }

  /**
   * POST /api/v1/admin/accounts/{id}/totp/reset `{current_password?}`: TOTP off, recovery codes gone, every
   * session ended, and a notice to the owner naming the administrator's address. Another administrator's
   * needs the acting administrator's password.
   */
  async resetTotp(actor: Account, id: string, input: { current_password?: string }, client: ClientInfo) {
    const target = await this.accountById(id);
    if (target.role === 'admin' && target.id !== actor.id) {
      await this.requireActorPassword(actor, input.current_password, "reset another administrator's TOTP");
    }
    // Passkeys are a second factor too (docs/DESIGN.md 18): the reset removes them, then turns TOTP off.
    const removed = await this.deps.passkeys.removeAll(id);
    let updated: Account;
    try {
      updated = await this.deps.secondFactorWrites.adminReset(id);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      if (removed === 0) throw errors.conflict('This account has no second factor to reset');
      // TOTP was off: the passkeys were the second factor; their sessions end all the same.
      updated = await this.deps.secondFactorWrites.endSessions(id);
    }
    await this.deps.changes.record(updated, 'totp_reset', client, { kind: 'totp_reset' });
    return this.view(updated);
  }

  /** One account as the back office shows it, with its storage use. */
  private async view(account: Account): Promise<AdminAccountView> {
    const usage = await this.usageOf([account]);
    return adminView(account, usage.get(account.id) ?? null);
  }

  private async usageOf(accounts: Account[]): Promise<Map<string, AccountUsage>> {
    if (!this.deps.usage || accounts.length === 0) return new Map();
    return this.deps.usage.usageOf(accounts.map((account) => ({ id: account.id, role: account.role })));
  }
}
