// File records in the table: the SPEC 2.3 record plus its owner, the per-owner dedupe claim on the hash,
// the owner's listing (gsi1) and the public gallery (gsi2).
import {
  ConditionFailedError,
  decodeCursor,
  encodeCursor,
  type Table,
  type TransactItem,
} from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import type { Page } from '../http/paging.ts';
import type { Permission, UploadRecord } from './record.ts';

export const fileKey = (id: string) => ({ pk: `file#${id}`, sk: 'file' });

/** One per (owner, SHA-256): whoever writes it owns those bytes for that owner (dedupe, race-safe). */
export const hashClaimKey = (ownerId: string, sha256: string) => ({
  pk: `filehash#${ownerId}#${sha256}`,
  sk: 'filehash',
});

const ownerIndex = (ownerId: string) => `files#${ownerId}`;
export const GALLERY_INDEX = 'gallery#public';

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
  /** present only while public */
  gsi2pk?: string;
  gsi2sk?: string;
  [attribute: string]: unknown;
}

/** A page of file records (lib/http/paging.ts). */
export type FilePage = Page<UploadRecord>;

/** The stored item of a new record (`record.created_at` from `now`, whose milliseconds order listings). */
export function fileItemOf(record: UploadRecord, ownerId: string, now: Date): FileItem {
  const { url: _url, ...fields } = record;
  const sortKey = `${now.toISOString()}#${record.id}`;
  return {
    ...fileKey(record.id),
    ...fields,
    owner_id: ownerId,
    gsi1pk: ownerIndex(ownerId),
    gsi1sk: sortKey,
    ...(record.permission === 'public' ? { gsi2pk: GALLERY_INDEX, gsi2sk: sortKey } : {}),
  };
}

/** The wire record; `url` follows the configured base URL rather than being frozen in the item. */
export function recordOf(item: FileItem, baseUrl: string): UploadRecord {
  return {
    id: item.id,
    key: item.key,
    url: `${baseUrl.replace(/\/+$/, '')}/i/${item.key}`,
    original_name: item.original_name,
    filename: item.filename,
    hash: item.hash,
    permission: item.permission,
    size: item.size,
    mime_type: item.mime_type,
    width: item.width,
    height: item.height,
    created_at: item.created_at,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type CreateOutcome = { created: true; item: FileItem } | { created: false; item: FileItem };

export class FileRepository {
  constructor(
    readonly table: Table,
    readonly baseUrl: string,
  ) {}

  record(item: FileItem): UploadRecord {
    return recordOf(item, this.baseUrl);
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
   * Writes the record and its hash claim in one transaction (plus `extra`, which must all succeed).
   * Of concurrent writers of the same bytes for one owner exactly one creates; the others get the
   * winner's item back (`created: false`). A failed condition on anything but the claim is rethrown.
   */
  async createDeduped(item: FileItem, extra: TransactItem[] = []): Promise<CreateOutcome> {
    const claimKey = hashClaimKey(item.owner_id, item.hash);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        await this.table.transact([
          { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              Item: { ...claimKey, file_id: item.id, owner_id: item.owner_id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...extra,
        ]);
        return { created: true, item };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        if (error.failedItems.some((index) => index !== 1)) throw error;
        // The claim is taken (or another transaction on it was in flight): read who holds it.
        const winner = await this.findByHash(item.owner_id, item.hash);
        if (winner) return { created: false, item: winner };
        // Nobody holds it any more (a conflicting write failed, or the file was just deleted): try again.
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * (attempt + 1)));
      }
    }
    throw errors.serviceUnavailable('Too many concurrent uploads of the same file; try again');
  }

  /** Takes back a record whose bytes could not be stored (and its claim), unless it changed meanwhile. */
  async removeUnstored(item: FileItem): Promise<void> {
    try {
      await this.table.transact([
        {
          Delete: {
            Key: fileKey(item.id),
            ConditionExpression: 'owner_id = :owner',
            ExpressionAttributeValues: { ':owner': item.owner_id },
          },
        },
        {
          Delete: {
            Key: hashClaimKey(item.owner_id, item.hash),
            ConditionExpression: 'attribute_not_exists(pk) OR file_id = :id',
            ExpressionAttributeValues: { ':id': item.id },
          },
        },
      ]);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<FilePage> {
    return this.page('gsi1', ownerIndex(ownerId), options);
  }

  async gallery(options: { limit: number; cursor?: string }): Promise<FilePage> {
    return this.page('gsi2', GALLERY_INDEX, options);
  }

  private async page(
    index: 'gsi1' | 'gsi2',
    partition: string,
    options: { limit: number; cursor?: string },
  ): Promise<FilePage> {
    const startKey = decodeCursor(options.cursor);
    if (startKey !== undefined) checkCursor(startKey, index, partition);
    const { items, lastKey } = await this.table.query<FileItem>({
      IndexName: index,
      KeyConditionExpression: `${index}pk = :partition`,
      ExpressionAttributeValues: { ':partition': partition },
      ScanIndexForward: false,
      Limit: options.limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    return { items: items.map((item) => this.record(item)), next_cursor: encodeCursor(lastKey) };
  }

  /** Sets the permission of the caller's file; public files join the gallery, private ones leave it. */
  async setPermission(ownerId: string, id: string, permission: Permission): Promise<UploadRecord> {
    if (!UUID.test(id)) throw errors.notFound('file: not found');
    const condition = {
      ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner',
      ExpressionAttributeNames: { '#permission': 'permission' },
    };
    try {
      const item =
        permission === 'public'
          ? await this.table.update<FileItem>(fileKey(id), {
              ...condition,
              UpdateExpression: 'SET #permission = :permission, gsi2pk = :gallery, gsi2sk = gsi1sk',
              ExpressionAttributeValues: {
                ':owner': ownerId,
                ':permission': permission,
                ':gallery': GALLERY_INDEX,
              },
            })
          : await this.table.update<FileItem>(fileKey(id), {
              ...condition,
              UpdateExpression: 'SET #permission = :permission REMOVE gsi2pk, gsi2sk',
              ExpressionAttributeValues: { ':owner': ownerId, ':permission': permission },
            });
      return this.record(item);
    } catch (error) {
      if (error instanceof ConditionFailedError) throw errors.notFound('file: not found');
      throw error;
    }
  }

  /** Removes the caller's record and its hash claim together; returns the removed item (for its object). */
  async deleteOwn(ownerId: string, id: string): Promise<FileItem> {
    const item = await this.getOwn(ownerId, id);
    try {
      await this.table.transact([
        {
          Delete: {
            Key: fileKey(id),
            ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner',
            ExpressionAttributeValues: { ':owner': ownerId },
          },
        },
        {
          Delete: {
            Key: hashClaimKey(ownerId, item.hash),
            ConditionExpression: 'attribute_not_exists(pk) OR file_id = :id',
            ExpressionAttributeValues: { ':id': id },
          },
        },
      ]);
    } catch (error) {
      // Deleted meanwhile by a concurrent request: to this caller it is simply gone.
      if (error instanceof ConditionFailedError) throw errors.notFound('file: not found');
      throw error;
    }
    return item;
  }
}

// A cursor is the last evaluated key of the same listing, nothing else: a forged one (another owner's
// partition, other attributes) is a 400 rather than a DynamoDB validation error.
function checkCursor(key: Record<string, unknown>, index: 'gsi1' | 'gsi2', partition: string): void {
  const names = Object.keys(key).sort().join(',');
  const expected = ['pk', 'sk', `${index}pk`, `${index}sk`].sort().join(',');
  const valid =
    names === expected &&
    key[`${index}pk`] === partition &&
    key.sk === 'file' &&
    typeof key.pk === 'string' &&
    key.pk.startsWith('file#');
  if (!valid) throw errors.badRequest('query.cursor: is not a valid cursor');
}
