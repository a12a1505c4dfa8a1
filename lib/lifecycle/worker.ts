// One run of the lifecycle worker (functions/account-lifecycle, every minute): the exports waiting in the
// `exports` listing, built one at a time (each streams its ZIP; one at a time keeps the function's memory
// that of one export), then the deletions due in the `deletions` listing, every shard at once. Both
// listings are sparse and sharded (lib/platform/db/shards.ts): a run reads only what waits, never a scan.
// Last, the files due for purging: expired, or past their time in the trash (lib/files/file-deletion.ts).
// It starts nothing with less than MIN_TIME_LEFT_MS left; what is left stays listed for the next run.
import { DELETIONS_LISTING } from '#lib/accounts/account-deletion.ts';
import type { FileDeletionService } from '#lib/files/file-deletion.ts';
import { type ShardedListing, shardPages } from '#lib/platform/db/shards.ts';
import type { Key, Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { ExportBuilder } from './export-builder.ts';
import { EXPORTS_LISTING } from './exports.ts';
import type { AccountPurge } from './purge.ts';

const MIN_TIME_LEFT_MS = 20_000;
const PAGE = 25;
/** The `account#<id>` partition both listings' items sit in names the account. */
const accountOf = (item: Key) => item.pk.slice('account#'.length);

export interface LifecycleSummary {
  exports: number;
  deletions: number;
  /** Files purged: expired, or past their time in the trash. */
  purged: number;
}

export interface LifecycleWorkerDeps {
  table: Table;
  listingShards: number;
  builder: ExportBuilder;
  purge: AccountPurge;
  files: Pick<FileDeletionService, 'purgeDue'>;
}

export class LifecycleWorker {
  constructor(private readonly deps: LifecycleWorkerDeps) {}

  async run(options: { timeLeftMs?: () => number } = {}): Promise<LifecycleSummary> {
    const enough = () => (options.timeLeftMs?.() ?? Number.POSITIVE_INFINITY) >= MIN_TIME_LEFT_MS;
    const shards = Array.from({ length: this.deps.listingShards }, (_, n) => n);
    let exports = 0;
    for (const shard of shards) {
      exports += await this.shard(EXPORTS_LISTING, shard, undefined, enough, (id) =>
        this.deps.builder.process(id),
      );
    }
    const due = `${this.deps.table.clock().toISOString()}#\u{10FFFF}`;
    const counts = await Promise.all(
      shards.map((shard) =>
        this.shard(DELETIONS_LISTING, shard, due, enough, (id) => this.deps.purge.process(id)),
      ),
    );
    const purged = await this.deps.files.purgeDue(enough);
    const summary = { exports, deletions: counts.reduce((sum, count) => sum + count, 0), purged };
    log.info('lifecycle run', { ...summary });
    return summary;
  }

  /** One shard of a listing, oldest first; a failure of one account is logged and left for the next run. */
  private async shard(
    name: string,
    shard: number,
    to: string | undefined,
    enough: () => boolean,
    work: (accountId: string) => Promise<boolean>,
  ): Promise<number> {
    const listing: ShardedListing = { index: 'listing', name, count: this.deps.listingShards };
    let done = 0;
    for await (const page of shardPages<Key>(this.deps.table, listing, shard, {
      pageSize: PAGE,
      ...(to ? { to } : {}),
    })) {
      for (const item of page) {
        if (!enough()) return done;
        const accountId = accountOf(item);
        const worked = await work(accountId).catch((error: unknown) => {
          log.warn('lifecycle work failed; the next run tries again', {
            listing: name,
            account_id: accountId,
            error,
          });
          return false;
        });
        if (worked) done += 1;
      }
    }
    return done;
  }
}
