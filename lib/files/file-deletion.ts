// A file's final deletion (docs/UPLOADS.md "Deleting", "Expiring uploads", "Trash"): the record, its claim,
// its purge mark and its bytes in the usage, with the owner's file.deleted event (docs/WEBHOOKS.md), then the
// object and its renditions. An owner's DELETE moves a
// file to the trash instead (lib/files/trash.ts); this runs when the trash is emptied, when the lifecycle
// worker's sweep finds a file expired or past its time in the trash, for account deletion, and for the back
// office's takedowns (which skip the trash). No invalidation per delete: the CDN's edge drops a deleted file
// within `cdn.deleted_max_age_seconds` (the /i/* cache policy's maximum, infra/edge.ts). A takedown is
// recorded for the next batched invalidation (lib/platform/cdn/takedowns.ts), within minutes, renditions
// included.
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { Takedowns } from '#lib/platform/cdn/takedowns.ts';
import { OUTBOX_KEY_PREFIX, TABLE } from '#lib/platform/db/keys.ts';
import { shardPages } from '#lib/platform/db/shards.ts';
import {
  ConditionFailedError,
  conditionFailedReturns,
  epochSeconds,
  type Key,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { type FileItem, type FileRepository, hashClaimKey } from './files.ts';
import { trashKey } from './prefixes.ts';
import { deletion, PURGES_LISTING, type PurgeMark } from './purge-items.ts';
import { renditionPrefixOf } from './rendition-query.ts';

const DELETE_ATTEMPTS = 5;
const SWEEP_PAGE = 25;

export const FILE_DELETED = 'file.deleted';
/** A file.deleted outbox item is there only for the table's stream: the TTL removes it after this. */
const DELETED_ITEM_MS = 2 * 86_400_000;

/** The owner's file.deleted event as its delete's transaction writes it (docs/WEBHOOKS.md "Events"). */
export interface FileDeletedItem {
  owner_id: string;
  created_at: string;
  file: Pick<FileItem, 'id' | 'key' | 'original_name' | 'size' | 'mime_type'>;
}

function fileDeletedOutboxPut(item: FileItem, now: Date): TransactItem {
  const { id, key, original_name, size, mime_type } = item;
  const event: FileDeletedItem = {
    owner_id: item.owner_id,
    created_at: isoWithOffset(now),
    file: { id, key, original_name, size, mime_type },
  };
  // A random key: the same file may be deleted again after a restore from the trash.
  const pk = `${OUTBOX_KEY_PREFIX}${FILE_DELETED}#${randomUUID()}`;
  const expires = epochSeconds(new Date(now.getTime() + DELETED_ITEM_MS));
  return { Put: { Item: { pk, sk: FILE_DELETED, ...event, [TABLE.ttlAttribute]: expires } } };
}

export interface FileDeletionDeps {
  files: FileRepository;
  storage: FileStorage;
  /** Where a takedown's `/i/<key>*` waits for the takedowns worker's next invalidation. */
  takedowns: Takedowns;
}

export class FileDeletionService {
  constructor(private readonly deps: FileDeletionDeps) {}

  /**
   * Deletes the owner's file for good, in the trash or expired too; a null owner is the back office (a
   * takedown): any file, same guarantees, and out of the CDN within minutes. 404 when there is none.
   */
  async delete(ownerId: string | null, id: string): Promise<{ id: string; deleted: true }> {
    const item = await this.deleteRecord(ownerId, id);
    await this.deleteBytes(item.key);
    if (ownerId === null) await this.recordTakedownQuietly(item.key);
    return { id: item.id, deleted: true };
  }

  /**
   * The purges due by now (the lifecycle worker, every minute): each expired file or one past its time in
   * the trash, every shard at once; `enough` stops a run short of its timeout. How many were purged.
   */
  async purgeDue(enough: () => boolean = () => true): Promise<number> {
    const { table, listingShards: count } = this.deps.files;
    const now = table.clock().toISOString();
    const to = `${now}#\u{10FFFF}`;
    const listing = { index: 'listing' as const, name: PURGES_LISTING, count };
    const shard = async (n: number) => {
      let done = 0;
      for await (const page of shardPages<Key>(table, listing, n, { pageSize: SWEEP_PAGE, to })) {
        for (const { pk } of page) {
          if (!enough()) return done;
          const mark = await table.get<PurgeMark>({ pk, sk: 'purge' });
          const due = mark !== undefined && mark.due <= now;
          const purged = due ? await this.purgeMarked(mark).catch(failed(mark)) : false;
          if (purged) done += 1;
        }
      }
      return done;
    };
    const counts = await Promise.all(Array.from({ length: count }, (_, n) => shard(n)));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /** A marked file, purged; its record may be gone already (DynamoDB's TTL): the mark has what it needs. */
  async purgeMarked(mark: PurgeMark): Promise<boolean> {
    const { files } = this.deps;
    if (await files.getStored(mark.id)) {
      await this.delete(mark.owner_id, mark.id);
      return true;
    }
    const claimed = await this.claimed(mark);
    const done = await files.table
      .transact(deletion(mark, { claimed, recordGone: true }))
      .then(() => true, conditionFailedReturns(false));
    if (done) await this.deleteBytes(mark.key);
    return done;
  }

  /**
   * Removes the record, its mark and its claim together, giving its bytes back to the owner's usage in the
   * same transaction when they were counted there; read again on every try (a concurrent request may have
   * deleted it, or the recount counted it). Returns the removed item (for its object).
   */
  private async deleteRecord(ownerId: string | null, id: string): Promise<FileItem> {
    const { files } = this.deps;
    for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt += 1) {
      const item = await files.getStored(id);
      if (!item || (ownerId !== null && item.owner_id !== ownerId)) throw errors.notFound('file: not found');
      try {
        // An owner's file.deleted event (webhooks) in the same transaction; a takedown sends none.
        const event = ownerId === null ? [] : [fileDeletedOutboxPut(item, files.table.clock())];
        await files.table.transact([...deletion(item, { claimed: await this.claimed(item) }), ...event]);
        return item;
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
      }
    }
    throw errors.serviceUnavailable('The file is being changed by other requests; try again');
  }

  /** Whether the file's hash claim is still its own (a later upload of the same bytes may hold it). */
  private async claimed(item: Pick<FileItem, 'id' | 'owner_id' | 'hash'>): Promise<boolean> {
    const key = hashClaimKey(item.owner_id, item.hash);
    const claim = await this.deps.files.table.get(key, { includeExpired: true });
    return claim?.file_id === item.id;
  }

  /** The original at its key and its renditions, at once: neither waits for the other (failures logged). */
  async deleteServed(key: string): Promise<void> {
    await Promise.all([this.deps.storage.deleteQuietly(key), this.deleteRenditionsQuietly(key)]);
  }

  /** Every object of the file: at its key, its renditions and its copy in the trash. */
  private async deleteBytes(key: string): Promise<void> {
    await Promise.all([this.deleteServed(key), this.deps.storage.deleteQuietly(trashKey(key))]);
  }

  /**
   * The file's stored renditions (docs/IMAGES.md). Like the original's, a failure leaves unlisted objects
   * behind (logged), never a record: the delete has happened.
   */
  private async deleteRenditionsQuietly(key: string): Promise<void> {
    try {
      await this.deps.storage.deletePrefix(renditionPrefixOf(key));
    } catch (error) {
      log.warn('could not delete the renditions of a deleted file', {
        key,
        error_name: (error as { name?: string } | undefined)?.name,
      });
    }
  }

  /**
   * Records `/i/<key>*` for the next batch: the file and, by CloudFront's wildcard (which covers query
   * strings), every rendition of it. The record and object are already gone, so a failure cannot undo the
   * takedown: it is logged (the edge then drops its copies within its maximum age, as for any delete) and
   * the delete succeeds.
   */
  private async recordTakedownQuietly(key: string): Promise<void> {
    const path = `/i/${key}*`;
    try {
      await this.deps.takedowns.record(path);
    } catch (error) {
      log.warn('could not record a takedown for the CDN', {
        path,
        error_name: (error as { name?: string } | undefined)?.name,
      });
    }
  }
}

/** A mark whose purge failed is logged and left for the next run. */
const failed = (mark: PurgeMark) => (error: unknown) => {
  log.warn('could not purge a file; the next run tries again', { file_id: mark.id, error });
  return false;
};
