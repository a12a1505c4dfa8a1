// The trash (docs/UPLOADS.md "Trash"): an owner's DELETE moves a file there for `files.trash_days`. It is
// served nowhere meanwhile (out of the gallery's and its album's listings, hidden from every read of its
// record; lib/files/files.ts getItem; its bytes copied to `trash/<key>` and gone from their key and
// renditions, so the CDN's edge finds nothing there with no look-up) and still counted in the owner's usage. Its owner lists, restores or
// empties it; the lifecycle worker purges what stayed past its time (lib/files/file-deletion.ts).
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { ConditionFailedError, conditionFailedReturns, isExpired } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { albumIndexKeys } from './album-keys.ts';
import type { FileDeletionService } from './file-deletion.ts';
import { type FileItem, type FileRepository, fileKey, fileListingKeys, hashClaimKey } from './files.ts';
import { ownerIndexPage } from './index-page.ts';
import { isHeld } from './moderation-state.ts';
import { trashKey } from './prefixes.ts';
import {
  ownerPurgesPartition,
  type PurgeMark,
  purgeMark,
  purgeMarkKey,
  TRASH_SORT_PREFIX,
} from './purge-items.ts';
import type { UploadRecord } from './record.ts';

/** A file in the trash as its owner's listing shows it. */
export type TrashedRecord = UploadRecord & { trashed_at: string; purge_at: string };

export interface TrashDeps {
  files: FileRepository;
  deletions: FileDeletionService;
  storage: FileStorage;
  /** `files.trash_days`. */
  trashDays: number;
}

const ATTEMPTS = 5;
const notInTrash = () => errors.notFound('file: not found in the trash');

export class Trash {
  constructor(private readonly deps: TrashDeps) {}

  /**
   * The owner's served file, into the trash: out of its listings and served nowhere; 404 when none. Read
   * again and tried again when a concurrent write came between. Its bytes are copied to the trash before the
   * record says so, then leave their key with the renditions (made again on demand after a restore).
   */
  async move(ownerId: string, id: string): Promise<{ id: string; deleted: true }> {
    const { files, trashDays } = this.deps;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const item = await files.getOwn(ownerId, id);
      const mark = purgeMark(item, files.listingShards, files.table.clock(), trashDays)!;
      const claim = hashClaimKey(ownerId, item.hash);
      // The same bytes uploaded meanwhile make a new file rather than find this hidden one.
      const claimed = (await files.table.get(claim, { includeExpired: true }))?.file_id === id;
      await this.deps.storage.copy(item.key, trashKey(item.key));
      const moved = await files.table
        .transact([
          {
            Update: {
              Key: fileKey(id),
              UpdateExpression: 'SET trashed_at = :at REMOVE gsi2pk, gsi2sk, gsi3pk, gsi3sk',
              ConditionExpression: 'owner_id = :owner AND attribute_not_exists(trashed_at)',
              ExpressionAttributeValues: { ':owner': ownerId, ':at': mark.trashed_at },
            },
          },
          { Put: { Item: mark } },
          ...(claimed
            ? [
                {
                  Delete: {
                    Key: claim,
                    ConditionExpression: 'file_id = :id',
                    ExpressionAttributeValues: { ':id': id },
                  },
                },
              ]
            : []),
        ])
        .then(() => true, conditionFailedReturns(false));
      if (!moved) continue;
      await this.deps.deletions.deleteServed(item.key);
      return { id, deleted: true };
    }
    throw errors.serviceUnavailable('The file is being changed by other requests; try again');
  }

  /** The owner's trash, most recently deleted first, each with when it went there and when it is purged. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<TrashedRecord>> {
    const { files } = this.deps;
    const page = await ownerIndexPage<PurgeMark>(
      files.table,
      ownerPurgesPartition(ownerId),
      { pk: /^purge#/, sk: 'purge' },
      { ...options, prefix: TRASH_SORT_PREFIX },
    );
    const marks = page.items.filter((mark) => mark.trashed_at);
    const items = (await files.fullItems(marks as unknown as FileItem[])).filter((item) => item.trashed_at);
    const records = await files.records(items);
    const dueOf = new Map(marks.map((mark) => [mark.id, mark.due]));
    return {
      items: records.map((record, index) => ({
        ...record,
        trashed_at: isoWithOffset(new Date(items[index]!.trashed_at!)),
        purge_at: isoWithOffset(new Date(dueOf.get(record.id)!)),
      })),
      next_cursor: page.next_cursor,
    };
  }

  /** The owner's file back from the trash, with its listings, its URL and its shares; 404 when not there. */
  async restore(ownerId: string, id: string): Promise<UploadRecord> {
    const { files } = this.deps;
    const item = await files.getStored(id);
    const now = files.table.clock();
    if (!item || item.owner_id !== ownerId || !item.trashed_at || isExpired(item, now)) throw notInTrash();
    // Back where it was: the gallery's or the private files' shard (a held file stays private), its album.
    const permission = isHeld(item.moderation) ? 'private' : item.permission;
    const keys = {
      ...fileListingKeys({ id, permission, gsi1sk: item.gsi1sk }, files.listingShards),
      ...albumIndexKeys(item.album_id, item.gsi1sk),
    };
    const names = Object.keys(keys);
    const mark = purgeMark(item, files.listingShards);
    // Its bytes back at their key first (a file trashed before they moved has them there still); taken back
    // again when the record was not restored after all (purged meanwhile).
    const copied = await this.deps.storage.copy(trashKey(item.key), item.key);
    await files.table
      .transact([
        {
          Update: {
            Key: fileKey(id),
            UpdateExpression: `SET ${names.map((name) => `${name} = :${name}`).join(', ')} REMOVE trashed_at`,
            ConditionExpression: 'trashed_at = :at',
            ExpressionAttributeValues: {
              ':at': item.trashed_at,
              ...Object.fromEntries(Object.entries(keys).map(([name, value]) => [`:${name}`, value])),
            },
          },
        },
        mark ? { Put: { Item: mark } } : { Delete: { Key: purgeMarkKey(id) } },
      ])
      .catch(async (error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
        if (copied) await this.deps.storage.deleteQuietly(item.key);
        throw notInTrash();
      });
    await this.deps.storage.deleteQuietly(trashKey(item.key));
    // Its dedupe claim again, unless an upload of the same bytes made another file meanwhile.
    const { trashed_at: _at, ...restored } = { ...item, ...keys };
    await files.table
      .putNew({
        ...hashClaimKey(ownerId, item.hash),
        file_id: id,
        owner_id: ownerId,
        ...(item.expires_at ? { expires_at: item.expires_at } : {}),
      })
      .catch(conditionFailedReturns(undefined));
    return files.recordOf(restored as FileItem);
  }

  /** Deletes one file of the owner's trash for good (404 when it is not there). */
  async purge(ownerId: string, id: string): Promise<{ id: string; deleted: true }> {
    const item = await this.deps.files.getStored(id);
    if (!item || item.owner_id !== ownerId || !item.trashed_at) throw notInTrash();
    return this.deps.deletions.delete(ownerId, id);
  }

  /** Empties the owner's trash: every file in it deleted for good, a page at a time. How many. */
  async empty(ownerId: string): Promise<{ deleted: number }> {
    let deleted = 0;
    let cursor: string | undefined;
    do {
      const page = await this.list(ownerId, { limit: 25, ...(cursor ? { cursor } : {}) });
      await Promise.all(page.items.map((item) => this.deps.deletions.delete(ownerId, item.id)));
      deleted += page.items.length;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return { deleted };
  }
}
