// An album's files (docs/DESIGN.md 16): the sparse `due` index's partition `album#<album id>`, read by key
// (a page of keys, then the items in one batch; a count), and a file's membership, set or removed in one
// conditional update of its record.
import { errors } from '#lib/core/errors.ts';
import { conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { albumFilesPartition } from './album-keys.ts';
import { type FileItem, fileKey } from './files.ts';
import { indexPage } from './index-page.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface AlbumFilesDeps {
  table: Table;
}

export class AlbumFiles {
  constructor(private readonly deps: AlbumFilesDeps) {}

  /**
   * One page of an album's file items, newest first: one partition of the sparse `due` index
   * (`album#<id>`), whose projection holds keys only, then the page's items in one batch read. The caller
   * checked the album.
   */
  async albumPage(
    albumId: string,
    options: { limit: number; cursor?: string | undefined },
  ): Promise<{ items: FileItem[]; next_cursor: string | null }> {
    const page = await indexPage<FileItem>(
      this.deps.table,
      'due',
      albumFilesPartition(albumId),
      { pk: /^file#/, sk: 'file' },
      options,
    );
    // A file deleted or moved out between the two reads is left out.
    return { ...page, items: page.items.filter((item) => item.album_id === albumId) };
  }

  /** How many files an album holds: a count over its partition of the `due` index (keys only). */
  async countAlbum(albumId: string): Promise<number> {
    return this.deps.table.count({
      IndexName: 'due',
      KeyConditionExpression: 'gsi3pk = :partition',
      ExpressionAttributeValues: { ':partition': albumFilesPartition(albumId) },
    });
  }

  /**
   * Puts the caller's file into an album (checked by the caller) or takes it out (null): its pointer and
   * its place in the album's listing, in one conditional update.
   */
  async setAlbum(ownerId: string, id: string, albumId: string | null): Promise<FileItem> {
    if (!UUID.test(id)) throw errors.notFound('file: not found');
    return this.deps.table
      .update<FileItem>(fileKey(id), {
        // Not in the trash: a trashed file stays out of its album's listing until restored.
        ConditionExpression:
          'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(trashed_at)',
        UpdateExpression: albumId
          ? 'SET album_id = :album, gsi3pk = :partition, gsi3sk = gsi1sk'
          : 'REMOVE album_id, gsi3pk, gsi3sk',
        ExpressionAttributeValues: {
          ':owner': ownerId,
          ...(albumId ? { ':album': albumId, ':partition': albumFilesPartition(albumId) } : {}),
        },
      })
      .catch(conditionFailedAs(() => errors.notFound('file: not found')));
  }
}
