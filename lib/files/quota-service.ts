// Quotas as the upload and payment services use them: reservations that ride in the record's transaction,
// the grant a settlement writes, and the usage an account (or the back office) reads.

import type { Role } from '#lib/accounts/model.ts';
import { errors } from '#lib/core/errors.ts';
import {
  type Clock,
  ConditionFailedError,
  conditionFailedReturns,
  epochSeconds,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import {
  effectiveQuota,
  type Grant,
  type GrantTerms,
  grantAfterRefund,
  isGrantActive,
  nextGrant,
  retentionDaysOf,
  type UsageState,
  type UsageView,
  usageView,
} from './quota-model.ts';
import { type HoldRequest, holdsMapUpdate, holdUpdate, releaseUpdate } from './quota-presign.ts';
import type { RateCharge, UploadRates } from './upload-rate.ts';
import {
  grantItem,
  grantRemovalItem,
  type ReservePlan,
  reserveItems,
  USAGE_SK,
  type UsageItem,
  type UsageRepository,
  type UsageSlot,
  usageStateOf,
} from './usage.ts';
import { tokenItems, tokenReserveItems } from './usage-buckets.ts';

/** How often a presign's hold is read and written again after losing a race, before that answers 409. */
const HOLD_ATTEMPTS = 5;

/** Whose usage: the account and its role (administrators have no quota). */
export interface QuotaAccount {
  id: string;
  role: Role;
  /**
   * A quota of its own, whatever the role: the static upload token's (`upload.api_token_quota_bytes`). Its
   * uploads are counted in its buckets (lib/files/usage-buckets.ts; those from before them in the owner's
   * single item), which an administrator's own uploads never touch.
   */
  quotaBytes?: number;
}

/** No quota: an administrator's own uploads (not the static token's). */
const unlimited = (account: QuotaAccount) => account.role === 'admin' && account.quotaBytes === undefined;

/** What a reservation is decided on: the usage as read and the quota in force. */
export interface UsageRead {
  state: UsageState;
  quotaBytes: number | null;
  /** The static token's usage items as read (its reservations go to its buckets). */
  items?: readonly UsageItem[] | undefined;
  /** The default retention of the owner's plan, in days (lib/files/expiry.ts expiryOrDefault). */
  retentionDays?: number | undefined;
}

/** What a presign is decided on: the usage items its hold starts from, and its plan's default retention. */
export interface PresignRead {
  items?: UsageItem[];
  retentionDays?: number | undefined;
}

/** What a reservation holds: whose bytes, for which file, and the usage they were checked against. */
export interface ReservationFacts extends UsageRead {
  service: Pick<QuotaService, 'stateFor'>;
  account: QuotaAccount;
  fileId: string;
  bytes: number;
  /** The upload's count in the owner's upload rate (lib/files/upload-rate.ts), written with its usage. */
  charge?: RateCharge | undefined;
}

/**
 * The bytes of one new file, to be reserved in the owner's usage in the same transaction that writes its
 * record. `check()` throws the 507 when they do not fit the usage as last read; `items()` are the
 * conditional writes; after that write's condition failed, `refresh()` reads again and checks again.
 * `recordFields()` are what the file's record keeps of it (its deletion gives the bytes back there).
 */
export class Reservation {
  private plan: ReservePlan | undefined;

  constructor(private readonly held: ReservationFacts) {}

  /** The default retention (days) of the owner's plan in the usage as read: lib/files/expiry.ts expiryOrDefault. */
  get retentionDays(): number | undefined {
    return this.held.retentionDays;
  }

  /** Whether the bytes fit the usage as last read (no quota: always). */
  fits(): boolean {
    const { quotaBytes, state, bytes } = this.held;
    return quotaBytes === null || state.usedBytes + bytes <= quotaBytes;
  }

  check(): void {
    if (!this.fits()) throw errors.insufficientStorage(this.held.state.usedBytes, this.held.quotaBytes!);
    this.held.charge?.check();
  }

  /**
   * The conditional writes (decided once per read of the usage: a bucket is chosen at random), then the
   * upload rate's.
   */
  items(): TransactItem[] {
    return [...this.decided().items, ...(this.held.charge?.items ?? [])];
  }

  /** Marks the record counted, and in which usage item when not the single one (an account without quota). */
  recordFields(): { usage_counted: true; usage_item?: UsageSlot } {
    const { slot } = this.decided();
    return slot === USAGE_SK ? { usage_counted: true } : { usage_counted: true, usage_item: slot };
  }

  /** `failed`: the indexes into `items()` whose condition failed; the upload rate's is a 429. */
  async refresh(failed: readonly number[] = []): Promise<void> {
    const usageItems = this.decided().items.length;
    await this.held.charge?.refuse(failed.map((index) => index - usageItems));
    const fresh = await this.held.service.stateFor(this.held.account);
    this.held.state = fresh.state;
    this.held.quotaBytes = fresh.quotaBytes;
    this.held.items = fresh.items;
    this.plan = undefined;
    this.check();
  }

  private decided(): ReservePlan {
    const { state, fileId, bytes, quotaBytes, items } = this.held;
    this.plan ??=
      items && quotaBytes !== null
        ? tokenReserveItems(state.accountId, items, bytes, quotaBytes)
        : reserveItems(state, fileId, bytes, quotaBytes);
    return this.plan;
  }
}

/** What a settlement writes: the grant, and the conditional write of it (none for a plan without storage). */
export interface GrantWrite {
  grant: Grant;
  item: TransactItem;
}

export interface QuotaDeps {
  usage: UsageRepository;
  clock: Clock;
  /** `upload.default_quota_bytes`. */
  defaultQuotaBytes: number;
  /** Upload rates per plan; none for administrators (and the static token: `upload.api_token_rate`). */
  rates?: UploadRates | undefined;
}

export class QuotaService {
  constructor(private readonly deps: QuotaDeps) {}

  /** GET /api/v1/usage for one account (for the static token: its own uploads and quota). */
  async usageOf(account: QuotaAccount): Promise<UsageView> {
    const state = usageStateOf(account.id, await this.itemsOf(account));
    const view = usageView(state, this.deps.clock(), this.deps, account.role);
    return account.quotaBytes === undefined ? view : { ...view, quota_bytes: account.quotaBytes };
  }

  /** Many accounts at once (100 per round trip), e.g. for a back-office listing; keyed by account id. */
  async usagesOf(accounts: readonly QuotaAccount[]): Promise<Map<string, UsageView>> {
    const admins = new Set(
      accounts.filter((account) => account.role === 'admin').map((account) => account.id),
    );
    const states = await this.deps.usage.readMany(
      accounts.map((account) => account.id),
      (id) => admins.has(id),
    );
    const now = this.deps.clock();
    return new Map(
      accounts.map((account) => [
        account.id,
        usageView(states.get(account.id)!, now, this.deps, account.role),
      ]),
    );
  }

  /**
   * The account's usage and the quota in force now (an administrator's is not even read: no quota, and its
   * reservations go to shards nothing conditions on).
   */
  async stateFor(account: QuotaAccount): Promise<UsageRead> {
    if (unlimited(account)) {
      return { state: { accountId: account.id, usedBytes: 0, fileCount: 0 }, quotaBytes: null };
    }
    const items = await this.itemsOf(account);
    const state = usageStateOf(account.id, items);
    return {
      state,
      quotaBytes: this.quotaOf(account, state),
      retentionDays: retentionDaysOf(state.grant, this.deps.clock(), account.role),
      ...(account.quotaBytes === undefined ? {} : { items }),
    };
  }

  /**
   * The usage a presign is decided on, read once: its plan's retention fixes the file's default expiry and
   * `holdPresigned` starts from it. Nothing is read for administrators (no quota) or the static token (its
   * hold reads its own buckets; an administrator's uploads have no default retention).
   */
  async presignRead(account: QuotaAccount): Promise<PresignRead> {
    if (unlimited(account) || account.quotaBytes !== undefined) return {};
    const items = await this.itemsOf(account);
    const grant = usageStateOf(account.id, items).grant;
    return { items, retentionDays: retentionDaysOf(grant, this.deps.clock(), account.role) };
  }

  /** The usage items a quota is checked on: the static token's, its own (not the owner's shards). */
  private async itemsOf(account: QuotaAccount) {
    // Only administrators have shards or buckets (and the static token's owner is one).
    const items = await this.deps.usage.items(account.id, account.role === 'admin');
    return account.quotaBytes === undefined ? items : tokenItems(items);
  }

  private quotaOf(account: QuotaAccount, state: UsageState): number | null {
    return account.quotaBytes ?? effectiveQuota(state.grant, this.deps.clock(), this.deps, account.role);
  }

  /**
   * Holds a presign's declared bytes against the account's quota until `releasePresigned` or the hold's
   * expiry (lib/files/quota-presign.ts): 507 when the usage and the presigned bytes outstanding leave no
   * room for them. No quota (administrators): nothing is held or written. `together` (the pending upload)
   * is written in the hold's transaction, so a presign waits once for both; true when it was written here.
   * `read` (presignRead) is what the first attempt decides on.
   */
  async holdPresigned(
    account: QuotaAccount,
    request: HoldRequest,
    together: TransactItem[] = [],
    read: PresignRead = {},
  ): Promise<boolean> {
    if (unlimited(account)) return false;
    if (account.quotaBytes !== undefined) {
      // The static token's presigns hold nothing (one item would take them all): 507 past its quota as
      // read, and its confirm is held to the quota exactly by its buckets.
      (await this.prepareReservation(account, request.bytes, '')).check();
      return false;
    }
    const { table } = this.deps.usage;
    for (let attempt = 1; ; attempt += 1) {
      const items = (attempt === 1 && read.items) || (await this.itemsOf(account));
      const state = usageStateOf(account.id, items);
      const now = this.deps.clock();
      const quotaBytes = this.quotaOf(account, state);
      if (quotaBytes === null) return false;
      const single = items.find((item) => item.sk === USAGE_SK);
      const { Key, ...update } = holdUpdate(state, single, quotaBytes, request, epochSeconds(now));
      const charge = this.chargeFor(account, state, request.bytes);
      charge?.check();
      try {
        if (single?.presigned === undefined) {
          const { Key: mapKey, ...create } = holdsMapUpdate(account.id);
          await table.update(mapKey, create);
        }
        await table.transact([{ Update: { Key, ...update } }, ...together, ...(charge?.items ?? [])]);
        return true;
      } catch (error) {
        if (error instanceof ConditionFailedError) {
          await charge?.refuse(error.failedItems.map((index) => index - 1 - together.length));
        }
        // The usage grew, a grant was written or another presign pruned the same hold: decide again.
        if (!(error instanceof ConditionFailedError) || attempt >= HOLD_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Gives back a presign's hold once it is confirmed or abandoned; one already gone is left as it is. An
   * administrator's presigns and the static token's held nothing: no write.
   */
  async releasePresigned(account: QuotaAccount, id: string, bytes: number): Promise<void> {
    if (unlimited(account) || account.quotaBytes !== undefined) return;
    const accountId = account.id;
    const { Key, ...update } = releaseUpdate(accountId, id, bytes);
    try {
      await this.deps.usage.table.update(Key, update).catch(conditionFailedReturns(undefined));
    } catch (error) {
      // The hold lapses with the presign (15 minutes): a failed release only delays that room.
      log.warn('could not release a presign hold', { accountId, id, error });
    }
  }

  /**
   * Reads what a reservation of file `fileId`'s `bytes` needs; the caller decides when to `check()` it
   * (dedupe first).
   */
  async prepareReservation(account: QuotaAccount, bytes: number, fileId: string): Promise<Reservation> {
    const read = await this.stateFor(account);
    return this.reservationOn(account, read, bytes, fileId, this.chargeFor(account, read.state, bytes));
  }

  /**
   * One upload's count in the account's upload rate, by the plan of its active grant (read with the usage:
   * no read of its own); none for administrators (the static token's owner is one).
   */
  private chargeFor(account: QuotaAccount, state: UsageState, bytes: number): RateCharge | undefined {
    const { rates, clock } = this.deps;
    if (!rates || account.role === 'admin') return undefined;
    const plan = isGrantActive(state.grant, clock()) ? state.grant.plan_id : undefined;
    return rates.charge(account.id, rates.rateOf(plan), bytes);
  }

  /**
   * A reservation on usage read already (`stateFor`), e.g. read beside other reads before the size was
   * known (confirm); the transaction's condition still holds it to the usage as it is when written.
   */
  reservationOn(
    account: QuotaAccount,
    read: UsageRead,
    bytes: number,
    fileId: string,
    charge?: RateCharge,
  ): Reservation {
    return new Reservation({
      service: this,
      account,
      fileId,
      bytes,
      charge,
      state: read.state,
      quotaBytes: read.quotaBytes,
      items: read.items,
      retentionDays: read.retentionDays,
    });
  }

  /**
   * The grant a paid order writes and its conditional write (conditioned on the grant read here, so a
   * concurrent settlement of another order makes the transaction fail and be decided again). Undefined
   * when the plan grants no storage.
   */
  async grantFor(userId: string, terms: GrantTerms): Promise<GrantWrite | undefined> {
    if (terms.quota_bytes === null) return undefined;
    const state = await this.deps.usage.read(userId);
    const grant = nextGrant(state.grant, terms, this.deps.clock());
    return grant ? { grant, item: grantItem(state, grant) } : undefined;
  }

  /**
   * What a full refund of an order that bought `terms` takes back of the buyer's grant (lib/files/quota-model.ts
   * grantAfterRefund), conditioned on the grant read here; undefined when nothing of it is left to take.
   */
  async takeBackFor(
    userId: string,
    terms: Pick<GrantTerms, 'plan_id' | 'quota_bytes' | 'duration_days'>,
  ): Promise<GrantTakeBack | undefined> {
    const state = await this.deps.usage.read(userId);
    const after = grantAfterRefund(state.grant, terms, this.deps.clock());
    if (after.kind === 'unchanged') return undefined;
    if (after.kind === 'removed') return { grant: null, item: grantRemovalItem(state) };
    return { grant: after.grant, item: grantItem(state, after.grant) };
  }
}

/** What a full refund writes to the buyer's grant: the grant after it (null: none) and its conditional write. */
export interface GrantTakeBack {
  grant: Grant | null;
  item: TransactItem;
}
