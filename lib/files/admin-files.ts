// The back office's listing of files (docs/UPLOADS.md, back office): one owner's files through the `owner`
// index, or every file newest first by reading the gallery's and the private files' shards as one listing.

import { readShards } from '#lib/platform/db/shards.ts';
import type { Table } from '#lib/platform/db/table.ts';
import {
  type FileItem,
  type FilePage,
  type FileRepository,
  GALLERY_LISTING,
  PRIVATE_LISTING,
} from './files.ts';

export interface AdminListRequest {
  ownerId?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export class AdminFiles {
  constructor(private readonly deps: { table: Table; files: FileRepository }) {}

  /** Any owner's files newest first (an unknown owner's page is empty), or every file without one. */
  async list(request: AdminListRequest): Promise<FilePage> {
    const { ownerId, limit, cursor } = request;
    if (ownerId !== undefined) return this.deps.files.list(ownerId, { limit, ...(cursor ? { cursor } : {}) });
    return this.listAll(limit, cursor);
  }

  /**
   * Both listings share one order (the sort key is the creation time and the id), so every shard of both
   * is read at once and merged; the cursor is one opaque string for all of them (a forged one is a 400).
   */
  private async listAll(limit: number, cursor: string | undefined): Promise<FilePage> {
    const { files } = this.deps;
    const page = await readShards<FileItem>(
      this.deps.table,
      { index: 'listing', names: [GALLERY_LISTING, PRIVATE_LISTING], count: files.listingShards },
      { limit, cursor, order: 'newest-first' },
    );
    return {
      items: await files.records(await files.fullItems(page.items)),
      next_cursor: page.next_cursor,
    };
  }
}
