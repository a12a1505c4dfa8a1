// Renewal reminders (docs/DESIGN.md 17): every grant with an end has one entry in a sparse, sharded index of
// end dates (the `due` index under `renewals#<n>`), written in the same transaction as the grant (settlement,
// a refund's take-back). The reminders worker reads the entries ending within `renewal_reminder_days`, every
// shard at once, mails each owner once per grant (a conditional marker) at no more than the SES rate it is
// given, and takes the entry out of the index.
import type { AccountRepository } from '#lib/accounts/repository.ts';
import type { Grant } from '#lib/files/quota-model.ts';
import { type ShardedListing, shardPages, shardPartition } from '#lib/platform/db/shards.ts';
import {
  type Clock,
  ConditionFailedError,
  epochSeconds,
  type Item,
  type Key,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { renewalReminderMail } from '#lib/platform/mail/templates.ts';
import { startPacer } from '#lib/platform/throughput.ts';

const DAY_MS = 86_400_000;
export const RENEWALS = 'renewals';
export const renewalKey = (accountId: string): Key => ({ pk: `renewal#${accountId}`, sk: 'renewal' });
const reminderMarkerKey = (accountId: string, grantOrderId: string): Key => ({
  pk: `reminded#${accountId}#${grantOrderId}`,
  sk: 'reminded',
});

const listing = (listingShards: number): ShardedListing => ({
  index: 'due',
  name: RENEWALS,
  count: listingShards,
});

/**
 * The write that keeps the account's entry in step with its grant, for the grant's own transaction: a grant
 * with an end is listed by that end (`id` and `deadline_ms` are what the `due` index carries); a permanent
 * grant, or none, is not listed.
 */
export function renewalItem(accountId: string, grant: Grant | null, listingShards: number): TransactItem {
  if (!grant || grant.ends_ms === undefined) return { Delete: { Key: renewalKey(accountId) } };
  return {
    Put: {
      Item: {
        ...renewalKey(accountId),
        id: accountId,
        deadline_ms: grant.ends_ms,
        grant_order_id: grant.order_id,
        plan_name: grant.plan_name,
        gsi3pk: shardPartition(listing(listingShards), accountId),
        gsi3sk: `${new Date(grant.ends_ms).toISOString()}#${accountId}`,
      },
    },
  };
}

export interface ReminderSummary {
  /** Entries ending within the window that were read. */
  found: number;
  reminded: number;
  /** Already reminded for this grant (a run that stopped before taking its entry out). */
  already: number;
  /** Ended before any run reached them (the worker was off): taken out without a mail. */
  ended: number;
  failed: number;
  /** True when time ran short with entries left: they stay listed for the next run. */
  more: boolean;
}

export interface RenewalRemindersDeps {
  table: Table;
  accounts: AccountRepository;
  mailer: Mailer;
  /** `billing.renewal_reminder_days`. */
  days: number;
  /** `billing.reminders_per_second`: reminders started a second at most (under the SES sending rate). */
  perSecond: number;
  listingShards: number;
  clock: Clock;
}

export interface ReminderRunOptions {
  /** The invocation's time left (Lambda's context.getRemainingTimeInMillis); absent: no limit. */
  timeLeftMs?: () => number;
}

/** Entries read per page of a shard (one BatchGetItem reads a page's entries again, strongly). */
const PAGE = 100;
/** No reminder starts with less time than this left (its marker, read, mail and unlisting). */
const TIME_RESERVE_MS = 10_000;

export class RenewalReminders {
  private readonly listing: ShardedListing;

  constructor(private readonly deps: RenewalRemindersDeps) {
    this.listing = listing(deps.listingShards);
  }

  /**
   * One run: every shard of the index read at once, each by its own page loop, reminders started at most
   * `perSecond` a second across them all, until the entries due are done or time runs short.
   */
  async run(options: ReminderRunOptions = {}): Promise<ReminderSummary> {
    const { table, clock, days } = this.deps;
    const now = clock();
    const summary: ReminderSummary = { found: 0, reminded: 0, already: 0, ended: 0, failed: 0, more: false };
    const until = `${new Date(now.getTime() + days * DAY_MS).toISOString()}~`;
    const pace = startPacer(this.deps.perSecond);
    const timeShort = () => options.timeLeftMs !== undefined && options.timeLeftMs() < TIME_RESERVE_MS;
    const readShard = async (shard: number) => {
      for await (const page of shardPages(table, this.listing, shard, { pageSize: PAGE, to: until })) {
        if (timeShort()) {
          summary.more = true;
          return;
        }
        summary.found += page.length;
        const current = await table.getMany(page.map((entry) => renewalKey(String(entry.id))));
        await Promise.all(
          page.map(async (entry, index) => {
            const accountId = String(entry.id);
            const seen = String(entry.gsi3sk);
            // Replaced since it was listed (a new grant): a later run reads it where it is now.
            const item = current[index];
            if (!item || item.gsi3sk !== seen) return;
            await pace();
            if (timeShort()) {
              summary.more = true;
              return;
            }
            await this.handle(accountId, seen, item, now, summary);
          }),
        );
      }
    };
    await Promise.all(Array.from({ length: this.deps.listingShards }, (_, shard) => readShard(shard)));
    if (summary.found > 0) log.info('renewal reminders run', { ...summary });
    return summary;
  }

  /** One entry: its reminder (unless its grant has ended), then out of the index. */
  private async handle(accountId: string, seen: string, item: Item, now: Date, summary: ReminderSummary) {
    try {
      const endsMs = Number(item.deadline_ms);
      if (endsMs <= now.getTime()) {
        summary.ended += 1;
      } else {
        const outcome = await this.remind(
          accountId,
          String(item.grant_order_id),
          endsMs,
          String(item.plan_name),
        );
        summary[outcome] += 1;
        if (outcome === 'failed') return;
      }
      await this.unlist(accountId, seen);
    } catch (error) {
      summary.failed += 1;
      log.error('a renewal reminder could not be handled', { account_id: accountId, error });
    }
  }

  /** The mail, once per grant: the marker first; a mail that fails takes the marker back for the next run. */
  private async remind(accountId: string, grantOrderId: string, endsMs: number, planName: string) {
    const { table, accounts, mailer } = this.deps;
    const marker = reminderMarkerKey(accountId, grantOrderId);
    try {
      // Kept a while past the grant's end, then the table's TTL removes it.
      await table.putNew({ ...marker, expires_at: epochSeconds(new Date(endsMs + 30 * DAY_MS)) });
    } catch (error) {
      if (error instanceof ConditionFailedError) return 'already' as const;
      throw error;
    }
    try {
      const account = await accounts.get(accountId);
      if (account?.email) {
        await mailer.send(renewalReminderMail(account.email, { planName, endsAt: new Date(endsMs) }));
      }
      return 'reminded' as const;
    } catch (error) {
      await table.delete(marker).catch(() => undefined);
      log.warn('a renewal reminder could not be sent; the next run tries again', {
        account_id: accountId,
        error,
      });
      return 'failed' as const;
    }
  }

  /** Out of the index (the entry stays for the grant's next write), if it is still the one read. */
  private async unlist(accountId: string, seen: string): Promise<void> {
    await this.deps.table
      .update(renewalKey(accountId), {
        UpdateExpression: 'REMOVE gsi3pk, gsi3sk',
        ConditionExpression: 'gsi3sk = :seen',
        ExpressionAttributeValues: { ':seen': seen },
      })
      .catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
      });
  }
}
