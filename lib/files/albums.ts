// Albums (docs/DESIGN.md 16): an owner's named sets of files. The album item, the owner's listing of albums
// (the `owner` index, partition `albums#<owner>`), and the album's files through the sparse `due` index
// (`album#<id>`), read by key. Deleting an album removes its item only: files that pointed at it read as
// outside any album from then on (FileRepository.records), so a delete is one write however many files.
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { type Clock, conditionFailedAs, setFields, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { AlbumFiles } from './album-files.ts';
import { ALBUM_ID, albumKey } from './album-keys.ts';
import type { FileItem, FilePage, FileRepository } from './files.ts';
import { ownerIndexPage } from './index-page.ts';
import { thumbnailOf } from './rendition-query.ts';

export const ALBUM_NAME_MAX = 100;
export const ALBUM_DESCRIPTION_MAX = 1000;

export interface AlbumItem {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
  gsi1pk: string;
  gsi1sk: string;
  [attribute: string]: unknown;
}

export interface AlbumView {
  id: string;
  name: string;
  description: string;
  file_count: number;
  cover_url: string | null;
  created_at: string;
  updated_at: string;
}

export const ownerAlbums = (ownerId: string) => `albums#${ownerId}`;

export interface AlbumServiceDeps {
  table: Table;
  files: FileRepository;
  /** The albums' file listings and memberships. */
  members: AlbumFiles;
  clock: Clock;
  baseUrl: string;
}

export class AlbumService {
  constructor(private readonly deps: AlbumServiceDeps) {}

  async create(
    ownerId: string,
    input: { name: string; description?: string | undefined },
  ): Promise<AlbumView> {
    const now = this.deps.clock();
    const id = randomUUID();
    const at = isoWithOffset(now);
    const item: AlbumItem = {
      ...albumKey(id),
      id,
      owner_id: ownerId,
      name: input.name,
      description: input.description ?? '',
      created_at: at,
      updated_at: at,
      gsi1pk: ownerAlbums(ownerId),
      gsi1sk: `${now.toISOString()}#${id}`,
    };
    await this.deps.table.put(item, { ConditionExpression: 'attribute_not_exists(pk)' });
    return { ...this.plain(item), file_count: 0, cover_url: null };
  }

  /** Any account's album, if it exists (shares read the album they name). */
  async find(id: string): Promise<AlbumItem | undefined> {
    if (!ALBUM_ID.test(id)) return undefined;
    return this.deps.table.get<AlbumItem>(albumKey(id));
  }

  /** The caller's album, else 404 (another account's is indistinguishable from none). */
  async getOwn(ownerId: string, id: string): Promise<AlbumItem> {
    const album = await this.find(id);
    if (!album || album.owner_id !== ownerId) throw errors.notFound('album: not found');
    return album;
  }

  async get(ownerId: string, id: string): Promise<AlbumView> {
    return this.view(await this.getOwn(ownerId, id));
  }

  /** The caller's albums, newest first: the owner index's partition `albums#<owner>`, then the items. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<AlbumView>> {
    const page = await ownerIndexPage<AlbumItem>(
      this.deps.table,
      ownerAlbums(ownerId),
      { pk: /^album#/, sk: 'album' },
      options,
    );
    return {
      items: await Promise.all(page.items.map((album) => this.view(album))),
      next_cursor: page.next_cursor,
    };
  }

  async update(
    ownerId: string,
    id: string,
    input: { name?: string | undefined; description?: string | undefined },
  ): Promise<AlbumView> {
    if (!ALBUM_ID.test(id)) throw errors.notFound('album: not found');
    const update = setFields(
      { name: input.name, description: input.description },
      isoWithOffset(this.deps.clock()),
    );
    const item = await this.deps.table
      .update<AlbumItem>(albumKey(id), {
        ...update,
        ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner',
        ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':owner': ownerId },
      })
      .catch(conditionFailedAs(() => errors.notFound('album: not found')));
    return this.view(item);
  }

  /**
   * Deletes the album item, nothing else: its files stay, read as outside any album from now on, and
   * shares of the album end (their open answers 410).
   */
  async delete(ownerId: string, id: string): Promise<{ id: string; deleted: true }> {
    if (!ALBUM_ID.test(id)) throw errors.notFound('album: not found');
    await this.deps.table
      .delete(albumKey(id), {
        ConditionExpression: 'attribute_exists(pk) AND owner_id = :owner',
        ExpressionAttributeValues: { ':owner': ownerId },
      })
      .catch(conditionFailedAs(() => errors.notFound('album: not found')));
    return { id, deleted: true };
  }

  /** The caller's album's files, newest first (GET /api/v1/files?album_id=). */
  async files(ownerId: string, id: string, options: { limit: number; cursor?: string }): Promise<FilePage> {
    await this.getOwn(ownerId, id);
    const page = await this.deps.members.albumPage(id, options);
    return { items: page.items.map((item) => this.deps.files.record(item)), next_cursor: page.next_cursor };
  }

  /** An album's newest files, at most `limit` (a share shows them). */
  async newestFiles(id: string, limit: number): Promise<FileItem[]> {
    return (await this.deps.members.albumPage(id, { limit })).items;
  }

  /** Checks an album given in an upload, a presign or a move is the caller's (404 otherwise). */
  async requireOwn(ownerId: string, id: string | null | undefined): Promise<string | null> {
    if (id === null || id === undefined || id === '') return null;
    return (await this.getOwn(ownerId, id)).id;
  }

  /** Puts the caller's file into the caller's album, or takes it out (null). */
  async moveFile(ownerId: string, fileId: string, albumId: string | null): Promise<FileItem> {
    const target = await this.requireOwn(ownerId, albumId);
    return this.deps.members.setAlbum(ownerId, fileId, target);
  }

  private async view(album: AlbumItem): Promise<AlbumView> {
    const [count, newest] = await Promise.all([
      this.deps.members.countAlbum(album.id),
      this.deps.members.albumPage(album.id, { limit: 1 }),
    ]);
    const cover = newest.items[0];
    return {
      ...this.plain(album),
      file_count: count,
      cover_url: cover ? thumbnailOf(this.deps.baseUrl, cover.key) : null,
    };
  }

  private plain(album: AlbumItem) {
    return {
      id: album.id,
      name: album.name,
      description: album.description,
      created_at: album.created_at,
      updated_at: album.updated_at,
    };
  }
}
