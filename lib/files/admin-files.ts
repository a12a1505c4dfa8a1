// The back office's listing of files (docs/UPLOADS.md, back office): one owner's files through gsi1, or
// every file newest first by merging gsi2's two partitions (the public gallery and the private files).

import { errors } from '#lib/core/errors.ts';
import { decodeCursor, encodeCursor, type Table } from '#lib/platform/db/table.ts';
import { type FileItem, type FilePage, type FileRepository, GALLERY_INDEX, PRIVATE_INDEX } from './files.ts';

/** A gsi2 sort key of a file: `<ISO with milliseconds>#<uuid>`. */
const SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$/;

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
   * Both gsi2 partitions share one order (the sort key is the creation time and the id), so the newest
   * `limit` files are the newest `limit` of the two queries merged. The cursor is the last sort key shown;
   * the next page asks each partition for what sorts before it.
   */
  private async listAll(limit: number, cursor: string | undefined): Promise<FilePage> {
    const before = beforeOf(cursor);
    const [gallery, hidden] = await Promise.all(
      [GALLERY_INDEX, PRIVATE_INDEX].map((partition) =>
        this.deps.table.query<FileItem>({
          IndexName: 'listing',
          KeyConditionExpression: before ? 'gsi2pk = :partition AND gsi2sk < :before' : 'gsi2pk = :partition',
          ExpressionAttributeValues: { ':partition': partition, ...(before ? { ':before': before } : {}) },
          ScanIndexForward: false,
          Limit: limit,
        }),
      ),
    );
    const merged = [...gallery!.items, ...hidden!.items].sort((a, b) =>
      String(b.gsi2sk).localeCompare(String(a.gsi2sk)),
    );
    const page = merged.slice(0, limit);
    const more = merged.length > limit || gallery!.lastKey !== undefined || hidden!.lastKey !== undefined;
    const last = page.at(-1)?.gsi2sk;
    return {
      items: page.map((item) => this.deps.files.record(item)),
      next_cursor: more && last ? encodeCursor({ before: last }) : null,
    };
  }
}

function beforeOf(cursor: string | undefined): string | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  const before = key.before;
  if (Object.keys(key).length !== 1 || typeof before !== 'string' || !SORT_KEY.test(before)) {
    throw errors.badRequest('query.cursor: is not a valid cursor');
  }
  return before;
}
