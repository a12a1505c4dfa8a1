// File records in the table: the SPEC 2.3 record plus its owner, the per-owner dedupe claim on the hash,
// the owner's listing (index `owner`) and the listings of everything (index `listing`): the public gallery
// and the private files, each spread over `listing_shards` shards (lib/platform/db/shards.ts) so that no
// index partition takes a write for every upload, delete or permission change.

import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import {
  ConditionFailedError,
  conditionFailedReturns,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { albumIndexKeys, albumKey } from './album-keys.ts';
import { type FileOwner, ownerFilesPage, ownerFilesPartition } from './index-page.ts';
import { isHeld } from './moderation-state.ts';
import type { Reservation } from './quota-service.ts';
import type { Permission, UploadFacts, UploadRecord } from './record.ts';
import { buildUploadRecord } from './record-build.ts';
import { thumbnailOf } from './rendition-query.ts';
import { releaseItem } from './usage.ts';

export const fileKey = (id: string) => ({ pk: `file#${id}`, sk: 'file' });

/** One per (owner, SHA-256): whoever writes it owns those bytes for that owner (dedupe, race-safe). */
export const hashClaimKey = (ownerId: string, sha256: string) => ({
  pk: `filehash#${ownerId}#${sha256}`,
  sk: 'filehash',
});

/** The listing of public files: shards `gallery#public#<n>` of the `listing` index. */
export const GALLERY_LISTING = 'gallery#public';
/**
 * The most files a gallery page holds, whatever `limit` asks (the console's page): a page reads up to this
 * many from each shard, so the cap bounds what one anonymous page costs (docs/CAPACITY.md).
 */
export const GALLERY_PAGE_MAX = 60;
/** The listing of private files: with the gallery's, every file (the back office's listing). */
export const PRIVATE_LISTING = 'files#private';

/** The listing a file of this permission belongs to, with `count` shards. */
export function fileListing(permission: Permission, count: number): ShardedListing {
  return { index: 'listing', name: permission === 'public' ? GALLERY_LISTING : PRIVATE_LISTING, count };
}

/** The listing index's keys of a file: its permission's listing, in the shard of its id. */
export function fileListingKeys(
  item: { id: string; permission: Permission; gsi1sk: string },
  count: number,
): { gsi2pk: string; gsi2sk: string } {
  return { gsi2pk: shardPartition(fileListing(item.permission, count), item.id), gsi2sk: item.gsi1sk };
}

export interface FileItem {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  key: string;
  filename: string;
  original_name: string;
  hash: string;
  permission: Permission;
  size: number;
  mime_type: string;
  width: number;
  height: number;
  /** the record's created_at (seconds, numeric offset) */
  created_at: string;
  gsi1pk: string;
  /** `<ISO with milliseconds>#<id>`: newest-first order within an owner */
  gsi1sk: string;
  /** `gallery#public#<n>` while public, `files#private#<n>` while private, n the shard of the id */
  gsi2pk?: string;
  gsi2sk?: string;
  /** The album it is in (docs/DESIGN.md 16); a deleted album's id is read as none. */
  album_id?: string;
  /** `album#<album id>` while in an album: the album's listing (the sparse `due` index). */
  gsi3pk?: string;
  gsi3sk?: string;
  /** true when the record's bytes are counted in the owner's usage (every record since quotas exist). */
  usage_counted?: boolean;
  /** The usage item that counted them when not the owner's single one (lib/files/usage.ts shards). */
  usage_item?: string;
  [attribute: string]: unknown;
}

/** A page of file records (lib/platform/db/paging.ts). */
export type FilePage = Page<UploadRecord>;

export interface NewFileInput {
  id: string;
  key: string;
  filename: string;
  facts: UploadFacts;
  permission: Permission;
  ownerId: string;
  /** The owner's role: an administrator's listing is sharded (lib/files/index-page.ts). */
  ownerRole: FileOwner['role'];
  now: Date;
  originalName: string;
  baseUrl: string;
  /** `listing_shards`: the gallery and private listings are spread over this many shards. */
  listingShards: number;
  /** The caller's album it goes into (already checked), if any. */
  albumId?: string | null | undefined;
}

/**
 * The stored item of an upload just checked (a direct upload or a confirm); `created_at` from `now`,
 * whose milliseconds order listings.
 */
export function newFileItem(input: NewFileInput): FileItem {
  const { ownerId, ownerRole, listingShards, ...fields } = input;
  const { url: _url, thumbnail: _thumbnail, album_id: albumId, ...record } = buildUploadRecord(fields);
  const sortKey = `${input.now.toISOString()}#${record.id}`;
  return {
    ...fileKey(record.id),
    ...record,
    ...(albumId ? { album_id: albumId } : {}),
    owner_id: ownerId,
    gsi1pk: ownerFilesPartition({ id: ownerId, role: ownerRole }, listingShards, record.id),
    gsi1sk: sortKey,
    ...fileListingKeys({ id: record.id, permission: record.permission, gsi1sk: sortKey }, listingShards),
    ...albumIndexKeys(albumId, sortKey),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type CreateOutcome = { created: boolean; item: FileItem };

export interface CreateOptions {
  /** The record's bytes, reserved in the owner's usage in the record's transaction (lib/files). */
  reservation?: Reservation;
  /** More writes that must succeed together with the record (a presign's confirmation). */
  extra?: TransactItem[];
}

/** Tries of the record transaction (claim races, usage refusals decided again, conflicts), of a delete. */
const [CREATE_ATTEMPTS, DELETE_ATTEMPTS] = [10, 5];

export interface FileRepositoryDeps {
  table: Table;
  /** `base_url`: records' URLs are `{base_url}/i/<key>`. */
  baseUrl: string;
  /** `listing_shards`: shards of the gallery and of the private files. */
  listingShards: number;
}

export class FileRepository {
  readonly table: Table;
  readonly baseUrl: string;
  readonly listingShards: number;

  constructor(deps: FileRepositoryDeps) {
    this.table = deps.table;
    this.baseUrl = deps.baseUrl;
    this.listingShards = deps.listingShards;
  }

  /**
   * The wire record; `url` follows the configured base URL rather than being frozen in the item.
   * `album_id` as stored: callers that may hold a deleted album's id read it through `records`.
   */
  record(item: FileItem): UploadRecord {
    return {
      id: item.id,
      key: item.key,
      url: `${this.baseUrl.replace(/\/+$/, '')}/i/${item.key}`,
      thumbnail: thumbnailOf(this.baseUrl, item.key),
      original_name: item.original_name,
      filename: item.filename,
      hash: item.hash,
      permission: item.permission,
      album_id: item.album_id ?? null,
      size: item.size,
      mime_type: item.mime_type,
      width: item.width,
      height: item.height,
      created_at: item.created_at,
      // Classified files only (docs/MODERATION.md); the gallery's index projects no `moderation`.
      ...(item.moderation ? { moderation: item.moderation as UploadRecord['moderation'] } : {}),
    };
  }

  /**
   * Wire records of stored items, with `album_id` null where the album was deleted since (deleting an
   * album leaves its files' pointers behind; docs/DESIGN.md 16): one read of the page's albums at most.
   */
  async records(items: FileItem[]): Promise<UploadRecord[]> {
    const albumIds = [...new Set(items.flatMap((item) => (item.album_id ? [item.album_id] : [])))];
    if (albumIds.length === 0) return items.map((item) => this.record(item));
    const found = await this.table.getMany(albumIds.map(albumKey));
    const live = new Set(albumIds.filter((_id, index) => found[index] !== undefined));
    return items.map((item) => {
      const record = this.record(item);
      return record.album_id && !live.has(record.album_id) ? { ...record, album_id: null } : record;
    });
  }

  /** One stored item's wire record, its album checked as `records` does. */
  async recordOf(item: FileItem): Promise<UploadRecord> {
    const [record] = await this.records([item]);
    return record!;
  }

  async getItem(id: string): Promise<FileItem | undefined> {
    if (!UUID.test(id)) return undefined;
    return this.table.get<FileItem>(fileKey(id));
  }

  /** The caller's file, else 404 (someone else's file is indistinguishable from none). */
  async getOwn(ownerId: string, id: string): Promise<FileItem> {
    const item = await this.getItem(id);
    if (!item || item.owner_id !== ownerId) throw errors.notFound('file: not found');
    return item;
  }

  /** Any owner's file, else 404 (the back office). */
  async getAny(id: string): Promise<FileItem> {
    const item = await this.getItem(id);
    if (!item) throw errors.notFound('file: not found');
    return item;
  }

  /** The owner's file with these bytes, if any (a claim whose record is gone counts as none). */
  async findByHash(ownerId: string, sha256: string): Promise<FileItem | undefined> {
    const claim = await this.table.get<{ pk: string; sk: string; file_id: string }>(
      hashClaimKey(ownerId, sha256),
    );
    if (!claim) return undefined;
    const item = await this.getItem(claim.file_id);
    return item && item.owner_id === ownerId ? item : undefined;
  }

  /**
   * Writes the record and its hash claim in one transaction, with the reservation of its bytes in the
   * owner's usage (lib/files) and `extra`, which must all succeed. Of concurrent writers of the same bytes
   * for one owner exactly one creates; the others get the winner's item back (`created: false`, nothing
   * reserved: a dedupe hit costs nothing). A refused reservation is read again: the 507 when the bytes no
   * longer fit, else another try. A failed condition on anything else is rethrown.
   */
  async createDeduped(item: FileItem, options: CreateOptions = {}): Promise<CreateOutcome> {
    const { reservation, extra = [] } = options;
    const claimKey = hashClaimKey(item.owner_id, item.hash);
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt += 1) {
      // The usage writes (one, or a static token bucket's balancing) follow the record and the claim.
      const usage = reservation ? reservation.items() : [];
      const stored: FileItem = reservation ? { ...item, ...reservation.recordFields() } : item;
      const isUsage = (index: number) => index >= 2 && index < 2 + usage.length;
      try {
        await this.table.transact([
          { Put: { Item: stored, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              Item: { ...claimKey, file_id: item.id, owner_id: item.owner_id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...usage,
          ...extra,
        ]);
        return { created: true, item: stored };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        const { failedItems } = error;
        if (failedItems.some((index) => index !== 1 && !isUsage(index))) throw error;
        if (failedItems.some(isUsage) && !failedItems.includes(1)) {
          // The usage moved (other uploads, a new grant), or the upload rate is spent: decide again.
          await reservation!.refresh(failedItems.map((index) => index - 2));
          continue;
        }
        // The claim is taken (or another transaction on it was in flight): read who holds it.
        const winner = await this.findByHash(item.owner_id, item.hash);
        if (winner) return { created: false, item: winner };
        if (failedItems.some(isUsage)) await reservation!.refresh(failedItems.map((index) => index - 2));
        // Nobody holds it any more (a conflicting write failed, or the file was just deleted): try again.
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * (attempt + 1)));
      }
    }
    throw errors.serviceUnavailable('Too many concurrent uploads; try again');
  }

  /**
   * Takes back a record whose bytes could not be stored (its claim, and its bytes from the owner's usage),
   * unless it changed meanwhile (deleted already: that deletion gave the bytes back); `extra` are undone
   * in the same transaction (a presign's confirmation).
   */
  async removeUnstored(item: FileItem, extra: TransactItem[] = []): Promise<void> {
    await this.table.transact([...deletion(item), ...extra]).catch(conditionFailedReturns(undefined));
  }

  /** The owner's files, newest first: their `owner` index partitions (index-page.ts), then the files. */
  async list(owner: FileOwner, options: { limit: number; cursor?: string }): Promise<FilePage> {
    const page = await ownerFilesPage<FileItem>(this.table, owner, this.listingShards, options);
    return { items: await this.records(page.items), next_cursor: page.next_cursor };
  }

  /**
   * The stored items of a page read from an index: the indexes do not project `album_id` (an index's
   * projection cannot change in place on a deployed table; docs/DESIGN.md 16), so listings that show it
   * read the page's items in one batch. An item deleted in between is left out.
   */
  async fullItems(items: FileItem[]): Promise<FileItem[]> {
    if (items.length === 0) return items;
    const full = await this.table.getMany<FileItem>(items.map((item) => fileKey(item.id)));
    return full.filter((item): item is FileItem => item !== undefined);
  }

  /**
   * Public files, newest first, at most GALLERY_PAGE_MAX a page (the anonymous page's cap), the shards
   * merged; records as the index holds them: whose album a file is in is not shown (`album_id` null).
   */
  async gallery(options: { limit: number; cursor?: string }): Promise<FilePage> {
    const page = await readShards<FileItem>(this.table, fileListing('public', this.listingShards), {
      limit: Math.min(options.limit, GALLERY_PAGE_MAX),
      cursor: options.cursor,
      order: 'newest-first',
    });
    return { items: page.items.map((item) => this.record(item)), next_cursor: page.next_cursor };
  }

  /**
   * Sets the permission of the caller's file (any file when `ownerId` is null: the back office); public
   * files join the gallery, private ones leave it, in the shard of the same number (both from the id).
   */
  async setPermission(ownerId: string | null, id: string, permission: Permission): Promise<UploadRecord> {
    if (!UUID.test(id)) throw errors.notFound('file: not found');
    const item = await this.table
      .update<FileItem>(fileKey(id), {
        ConditionExpression: `attribute_exists(pk) AND NOT moderation.#state = :held${ownerId === null ? '' : ' AND owner_id = :owner'}`,
        ExpressionAttributeNames: { '#permission': 'permission', '#state': 'state' },
        UpdateExpression: 'SET #permission = :permission, gsi2pk = :partition, gsi2sk = gsi1sk',
        ExpressionAttributeValues: {
          ...(ownerId === null ? {} : { ':owner': ownerId }),
          ':permission': permission,
          ':held': 'held',
          ':partition': shardPartition(fileListing(permission, this.listingShards), id),
        },
      })
      .catch(async (error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
        const found = await this.getItem(id);
        const theirs = found !== undefined && (ownerId === null || found.owner_id === ownerId);
        if (theirs && isHeld(found.moderation))
          throw errors.conflict('file: is held for review; its permission changes once it is approved');
        throw errors.notFound('file: not found');
      });
    return this.recordOf(item);
  }

  /**
   * Removes the caller's record and its hash claim together, giving its bytes back to the owner's usage
   * in the same transaction when they were counted there, with `also` (an owner's file.deleted event).
   */
  async deleteOwn(ownerId: string | null, id: string, also?: (file: FileItem) => TransactItem[]) {
    for (let attempt = 0; attempt < DELETE_ATTEMPTS; attempt += 1) {
      // Read again on every try: a concurrent request may have deleted it, or the recount counted it.
      // A null owner is the back office: any file, its bytes given back to whoever owns it.
      const item = ownerId === null ? await this.getAny(id) : await this.getOwn(ownerId, id);
      try {
        await this.table.transact([...deletion(item), ...(also?.(item) ?? [])]);
        return item;
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
      }
    }
    throw errors.serviceUnavailable('The file is being changed by other requests; try again');
  }
}

/**
 * Removes the record (only while it is the same owner's and its usage_counted is as read) and its hash
 * claim, giving its bytes back to the owner's usage when they were counted there.
 */
function deletion(item: FileItem): TransactItem[] {
  const counted = item.usage_counted === true;
  return [
    {
      Delete: {
        Key: fileKey(item.id),
        ConditionExpression: `owner_id = :owner AND ${
          counted ? 'usage_counted = :counted' : 'attribute_not_exists(usage_counted)'
        }`,
        ExpressionAttributeValues: { ':owner': item.owner_id, ...(counted ? { ':counted': true } : {}) },
      },
    },
    {
      Delete: {
        Key: hashClaimKey(item.owner_id, item.hash),
        ConditionExpression: 'attribute_not_exists(pk) OR file_id = :id',
        ExpressionAttributeValues: { ':id': item.id },
      },
    },
    ...(counted ? [releaseItem(item.owner_id, item.size, item.usage_item)] : []),
  ];
}
