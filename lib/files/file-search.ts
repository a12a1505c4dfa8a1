// An owner's tags and the owner's search (docs/UPLOADS.md "Tags and search"): setting a file's tags (the
// record and its tag items in one transaction), the owner's files under one tag (newest first) and those
// whose name begins with a prefix (by name), each page one Query of the file's look-up items
// (lib/files/file-index.ts) and one batch read of their records. Never a scan.
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import {
  ANY_KEY_VALUE,
  ConditionFailedError,
  decodeCursor,
  encodeCursor,
  invalidCursor,
  isKeyValue,
  type Table,
} from '#lib/platform/db/table.ts';
import {
  indexItem,
  namePartition,
  parseTags,
  searchName,
  tagKeys,
  tagPartition,
  tagsAsRead,
} from './file-index.ts';
import { type FileItem, type FileRepository, fileKey } from './files.ts';
import type { UploadRecord } from './record.ts';

/** Tries of a tag change that met another change of the same file. */
const ATTEMPTS = 3;

export interface FileSearchDeps {
  table: Table;
  files: FileRepository;
}

type PageRequest = { limit: number; cursor?: string | undefined };

export class FileSearch {
  constructor(private readonly deps: FileSearchDeps) {}

  /** Replaces the tags of the caller's file (400 for a bad tag or more than 20; 404 when not theirs). */
  async setTags(ownerId: string, id: string, given: readonly string[]): Promise<UploadRecord> {
    const tags = parseTags(given);
    const { table, files } = this.deps;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const item = await files.getOwn(ownerId, id);
      const before = item.tags ?? [];
      const read = tagsAsRead(item);
      try {
        await table.transact([
          {
            Update: {
              Key: fileKey(id),
              ConditionExpression: `owner_id = :owner AND ${read.condition}`,
              UpdateExpression: tags.length > 0 ? 'SET tags = :new' : 'REMOVE tags',
              ExpressionAttributeValues: {
                ':owner': ownerId,
                ...read.values,
                ...(tags.length > 0 ? { ':new': tags } : {}),
              },
            },
          },
          ...tagKeys(
            item,
            before.filter((tag) => !tags.includes(tag)),
          ).map((Key) => ({ Delete: { Key } })),
          ...tagKeys(
            item,
            tags.filter((tag) => !before.includes(tag)),
          ).map((key) => ({ Put: { Item: indexItem(item, key) } })),
        ]);
        return files.recordOf({ ...item, tags });
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
    throw errors.conflict('file: is being changed by other requests; try again');
  }

  /** The owner's files with this tag, newest first. */
  byTag(ownerId: string, tag: string, page: PageRequest): Promise<Page<UploadRecord>> {
    const [wanted] = parseTags([tag]);
    if (wanted === undefined) throw errors.badRequest('query.tag: must not be empty');
    return this.page(ownerId, tagPartition(ownerId, wanted), '', page);
  }

  /** The owner's files whose original name begins with `query` (case-insensitive), by name. */
  byName(ownerId: string, query: string, page: PageRequest): Promise<Page<UploadRecord>> {
    const prefix = searchName(query.trim());
    if (!isKeyValue(prefix)) throw errors.badRequest('query.q: must be 1 to 100 characters of text');
    return this.page(ownerId, namePartition(ownerId), prefix, page);
  }

  /** One Query of a partition of look-up items (by prefix when one is given), then their records. */
  private async page(
    ownerId: string,
    partition: string,
    prefix: string,
    { limit, cursor }: PageRequest,
  ): Promise<Page<UploadRecord>> {
    const { table, files } = this.deps;
    const startKey = decodeCursor(cursor, { pk: partition, sk: ANY_KEY_VALUE });
    // A start outside the prefix's range would be DynamoDB's ValidationException: not this listing's cursor.
    if (startKey && !startKey.sk!.startsWith(prefix)) throw invalidCursor();
    const { items, lastKey } = await table.query<{ file_id: string }>({
      KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': partition, ...(prefix ? { ':prefix': prefix } : {}) },
      // Names A to Z; tags newest first.
      ScanIndexForward: prefix !== '',
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    const found =
      items.length === 0 ? [] : await table.getMany<FileItem>(items.map((item) => fileKey(item.file_id)));
    // Expired records the table's reads already hide; a file in the trash keeps its items until it is purged.
    const own = found.filter((item): item is FileItem => item?.owner_id === ownerId && !item.trashed_at);
    return { items: await files.records(own), next_cursor: encodeCursor(lastKey) };
  }
}
