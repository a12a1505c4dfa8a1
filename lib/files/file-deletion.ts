// DELETE /api/v1/files/{id} and its back-office form: the record, its claim and its bytes in the usage, then
// the object. No invalidation per delete: the CDN's edge drops a deleted file within
// `cdn.deleted_max_age_seconds` (the /i/* cache policy's maximum, infra/edge.ts). A takedown by the back
// office is recorded for the next batched invalidation (lib/platform/cdn/takedowns.ts), within minutes,
// renditions included.
import { randomUUID } from 'node:crypto';
import type { Takedowns } from '#lib/platform/cdn/takedowns.ts';
import { OUTBOX_KEY_PREFIX, TABLE } from '#lib/platform/db/keys.ts';
import { epochSeconds, type TransactItem } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { FileItem, FileRepository } from './files.ts';
import { renditionPrefixOf } from './rendition-query.ts';

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

  /** A null owner is the back office: any file, same guarantees, and out of the CDN within minutes. */
  async delete(ownerId: string | null, id: string): Promise<{ id: string; deleted: true }> {
    // An owner's delete writes its file.deleted event (webhooks) in its own transaction.
    const event = (file: FileItem) => [fileDeletedOutboxPut(file, this.deps.files.table.clock())];
    const item = await this.deps.files.deleteOwn(ownerId, id, ownerId === null ? undefined : event);
    // The record is gone first, so a failure here leaves an unlisted object, never a record without bytes.
    // The original and its renditions at once: neither waits for the other.
    await Promise.all([this.deps.storage.deleteQuietly(item.key), this.deleteRenditionsQuietly(item.key)]);
    if (ownerId === null) await this.recordTakedownQuietly(item.key);
    return { id: item.id, deleted: true };
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
