// The back office's listing of files (docs/UPLOADS.md, back office): one owner's files through the `owner`
// index, or every file newest first by reading the gallery's and the private files' shards as one listing;
// each item names its owner (id and username, the page's owners read in one batch). And one file found by
// its URL, share link, key or id: read by key, never searched for.

import type { AccountRepository } from '#lib/accounts/repository.ts';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards } from '#lib/platform/db/shards.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { type FileItem, type FileRepository, GALLERY_LISTING, PRIVATE_LISTING } from './files.ts';
import { parseStorageKey } from './names.ts';
import type { UploadRecord } from './record.ts';
import { shareKey } from './shares.ts';

export interface AdminListRequest {
  ownerId?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** A file as the back office lists it: the record and its owner (username null once the account is gone). */
export type AdminFileRecord = UploadRecord & { owner_id: string; owner_username: string | null };

export interface AdminFilesDeps {
  table: Table;
  files: FileRepository;
  /** The owners' usernames. */
  accounts: Pick<AccountRepository, 'usernamesOf' | 'get'>;
}

export class AdminFiles {
  constructor(private readonly deps: AdminFilesDeps) {}

  /** Any owner's files newest first (an unknown owner's page is empty), or every file without one. */
  async list(request: AdminListRequest): Promise<Page<AdminFileRecord>> {
    const { ownerId, limit, cursor } = request;
    if (ownerId !== undefined) {
      // The owner's role says how their listing is kept (lib/files/files.ts ownerListing).
      const account = await this.deps.accounts.get(ownerId);
      const owner = { id: ownerId, role: account?.role ?? 'user' };
      const page = await this.deps.files.list(owner, { limit, ...(cursor ? { cursor } : {}) });
      const owners = page.items.length === 0 ? new Map() : await this.usernames([ownerId]);
      return {
        items: page.items.map((record) => withOwner(record, ownerId, owners)),
        next_cursor: page.next_cursor,
      };
    }
    return this.listAll(limit, cursor);
  }

  /**
   * Both listings share one order (the sort key is the creation time and the id), so every shard of both
   * is read at once and merged; the cursor is one opaque string for all of them (a forged one is a 400).
   */
  private async listAll(limit: number, cursor: string | undefined): Promise<Page<AdminFileRecord>> {
    const { files } = this.deps;
    const page = await readShards<FileItem>(
      this.deps.table,
      { index: 'listing', names: [GALLERY_LISTING, PRIVATE_LISTING], count: files.listingShards },
      { limit, cursor, order: 'newest-first' },
    );
    const items = await files.fullItems(page.items);
    const [records, owners] = await Promise.all([
      files.records(items),
      this.usernames(items.map((item) => item.owner_id)),
    ]);
    return {
      items: records.map((record, index) => withOwner(record, items[index]!.owner_id, owners)),
      next_cursor: page.next_cursor,
    };
  }

  /**
   * The file a reference names: its id; its key, or a URL of it (/i/<key>, a rendition's query ignored), the
   * id read from the key and the record's key checked; a share link of one file (/s/<id>). Else 404.
   */
  async find(ref: string): Promise<AdminFileRecord> {
    const { files, table } = this.deps;
    // A key needs no escaping in a URL: its path is the key as it is.
    const url = /^https?:\/\//i.test(ref);
    const path = (url ? (URL.canParse(ref) ? new URL(ref).pathname : '') : ref).replace(/^\/+/, '');
    const share = /^s\/([A-Za-z0-9_-]{32})(?:\/|$)/.exec(path);
    const key = path.replace(/^i\//, '');
    const id = share
      ? (await table.get<{ file_id?: string }>(shareKey(share[1]!)))?.file_id
      : (parseStorageKey(key)?.id ?? key);
    const item = id === undefined ? undefined : await files.getItem(id);
    if (!item || (!share && item.id !== key && item.key !== key)) {
      throw errors.notFound('ref: no file has this URL, key or id');
    }
    const [record, owners] = await Promise.all([files.recordOf(item), this.usernames([item.owner_id])]);
    return withOwner(record, item.owner_id, owners);
  }

  /** The usernames of these accounts (a page holds at most 100 owners: one batch read). */
  private usernames(ids: string[]): Promise<Map<string, string>> {
    return this.deps.accounts.usernamesOf(ids);
  }
}

function withOwner(record: UploadRecord, ownerId: string, owners: Map<string, string>): AdminFileRecord {
  return { ...record, owner_id: ownerId, owner_username: owners.get(ownerId) ?? null };
}
