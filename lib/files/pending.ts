// Pending presigned uploads in the table: the grant a presign writes, its confirmation marker, and the
// look-up of what a key was confirmed into.

import type { ImageKind } from '#lib/files/metadata/types.ts';
import {
  conditionFailedReturns,
  epochSeconds,
  type Item,
  type Table,
  type TransactItem,
} from '#lib/platform/db/table.ts';
import { type FileItem, fileKey } from './files.ts';
import type { Permission } from './record.ts';

/** How long a presigned upload (its URL and its pending item) stays valid. */
export const PRESIGN_TTL_SECONDS = 15 * 60;
/** How long a confirmed presign is remembered when it was settled onto an existing file (dedupe). */
export const CONFIRMED_MARKER_TTL_SECONDS = 24 * 60 * 60;

export const pendingKey = (key: string) => ({ pk: `pending#${key}`, sk: 'pending' });

export interface PendingItem extends Item {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  key: string;
  mime_type: string;
  kind: ImageKind;
  size: number;
  original_name: string;
  permission: Permission;
  /** The caller's album named at presign (docs/DESIGN.md 16), if any. */
  album_id?: string;
  /** Its tags named at presign, parsed (lib/files/file-index.ts), if any. */
  tags?: string[];
  /** When the file expires (epoch seconds; lib/files/expiry.ts), if it was asked to. */
  file_expires_at?: number;
  created_at: string;
  expires_at: number;
  confirmed_file_id?: string;
}

export interface PendingUploadsDeps {
  table: Table;
}

export class PendingUploads {
  constructor(private readonly deps: PendingUploadsDeps) {}

  async create(pending: PendingItem): Promise<void> {
    await this.deps.table.putNew(pending);
  }

  /**
   * The record under the key's own id and the pending item, in one batch read (strongly consistent, but
   * not isolated from a transaction writing both). The pending item comes as stored, expired or not: an
   * expired one is abandoned, not merely unknown.
   */
  async recordAndPending(key: string, id: string): Promise<[FileItem | undefined, PendingItem | undefined]> {
    const [own, pending] = await this.deps.table.getMany<Item>([fileKey(id), pendingKey(key)], {
      includeExpired: true,
    });
    return [own as FileItem | undefined, pending as PendingItem | undefined];
  }

  /** The write that marks the pending upload confirmed into `fileId`, if it is still the owner's and open. */
  markConfirmed(pending: PendingItem, fileId: string, now: Date): TransactItem {
    return {
      Update: {
        Key: pendingKey(pending.key),
        UpdateExpression: 'SET confirmed_file_id = :file, expires_at = :expires',
        ConditionExpression:
          'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(confirmed_file_id)',
        ExpressionAttributeValues: {
          ':file': fileId,
          ':owner': pending.owner_id,
          ':expires': epochSeconds(now) + CONFIRMED_MARKER_TTL_SECONDS,
        },
      },
    };
  }

  /**
   * Undoes `markConfirmed(pending, fileId)` in the transaction that takes back a record whose bytes could
   * not be stored: the grant is open again until its own expiry, for a confirm of what is there now.
   */
  reopen(pending: PendingItem, fileId: string): TransactItem {
    return {
      Update: {
        Key: pendingKey(pending.key),
        UpdateExpression: 'SET expires_at = :expires REMOVE confirmed_file_id',
        ConditionExpression: 'confirmed_file_id = :file',
        ExpressionAttributeValues: { ':file': fileId, ':expires': pending.expires_at },
      },
    };
  }

  /** Marks the pending upload confirmed onto another file; false when it was no longer open. */
  async confirmOnto(pending: PendingItem, fileId: string, now: Date): Promise<boolean> {
    return this.deps.table
      .transact([this.markConfirmed(pending, fileId, now)])
      .then(() => true, conditionFailedReturns(false));
  }

  /** Removes a pending upload that was never confirmed (a confirmed one's marker stays). */
  async removeUnconfirmed(key: string): Promise<void> {
    await this.deps.table
      .delete(pendingKey(key), { ConditionExpression: 'attribute_not_exists(confirmed_file_id)' })
      .catch(conditionFailedReturns(undefined));
  }
}
