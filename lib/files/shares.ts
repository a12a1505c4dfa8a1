// Share links (docs/DESIGN.md 16): one file or one album behind an unguessable id, with an optional password
// (argon2id, like account passwords; guessing bounded by the login guard per visitor address), expiry and
// view limit. An open reads the share once; only a link with `max_views` writes on a view (one conditional
// update, so with `max_views` k exactly k opens succeed however many arrive at once); an unlimited link's open
// writes nothing and its `views` is not counted per request (DESIGN 24). The owner's shares are listed by key (the `owner` index,
// `shares#<owner>`). Viewers get the share's own image links (share-grants.ts), checked on every request
// that reaches the function, never a file's /i/<key> (docs/ALBUMS.md "What a share adds").
import { createHash, randomBytes } from 'node:crypto';
import { addressBucket } from '#lib/accounts/client.ts';
import type { LoginGuard } from '#lib/accounts/login-guard.ts';
import { hashPassword, verifyPassword } from '#lib/accounts/passwords.ts';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { type Clock, conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { albumKey } from './album-keys.ts';
import type { AlbumService } from './albums.ts';
import { type FileItem, type FileRepository, fileKey } from './files.ts';
import { ownerIndexPage } from './index-page.ts';
import { HELD_MESSAGE, isHeld } from './moderation-state.ts';
import { ownerTagOfKey } from './names.ts';
import { edgeRulesAt, REFUSAL_MESSAGES } from './owner-rules.ts';
import { renderableSourceOfKey, THUMBNAIL_QUERY } from './rendition-query.ts';
import { SHARE_IMAGE_MAX_AGE_SECONDS, type ShareGrants } from './share-grants.ts';
import type { OpenedShare, ShareItemView, ShareView } from './share-views.ts';

/** At most this many of an album's files (the newest) are shown by one open. */
export const MAX_SHARE_ITEMS = 100;
export const MAX_SHARE_VIEWS = 1_000_000;
export const SHARE_PASSWORD_MAX = 128;

/** 24 random bytes, base64url: 192 bits (DESIGN 16 asks for at least 128). */
const newShareId = () => randomBytes(24).toString('base64url');
const SHARE_ID = /^[A-Za-z0-9_-]{32}$/;

export const shareKey = (id: string) => ({ pk: `share#${id}`, sk: 'share' });
export const ownerShares = (ownerId: string) => `shares#${ownerId}`;
/**
 * The guard of a share's password for one visitor address (IPv6 by its /64): its own subject beside the
 * accounts' (`user-`, `unknown-`), so wrong passwords from one address never hold another's right one.
 */
const guardSubjectOf = (id: string, visitor: string) =>
  `share-${id}-${createHash('sha256').update(addressBucket(visitor)).digest('hex').slice(0, 32)}`;

export const SHARE_GONE = 'share is no longer available';
const LINK_EXPIRED = 'link: this image link has expired; open the share again';

interface ShareItem {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  file_id?: string;
  album_id?: string;
  /** argon2id PHC string; never in an index, never answered. */
  password_hash?: string;
  /** The share's end as given (ISO with offset) and in epoch milliseconds, for the condition. Not the
   * table's TTL attribute (`expires_at`): an ended share answers 410, not 404. */
  ends_at?: string;
  ends_at_ms?: number;
  max_views?: number;
  views: number;
  revoked_at?: string;
  created_at: string;
  gsi1pk?: string;
  gsi1sk?: string;
  [attribute: string]: unknown;
}

export interface CreateShareInput {
  file_id?: string | null | undefined;
  album_id?: string | null | undefined;
  password?: string | undefined;
  expires_at?: string | undefined;
  max_views?: number | undefined;
}

export interface ShareServiceDeps {
  table: Table;
  files: FileRepository;
  albums: AlbumService;
  /** The login guard's rules (10 failures, then back-off), under a subject per share and visitor address. */
  guard: LoginGuard;
  /** The share-scoped image links viewers get. */
  grants: ShareGrants;
  clock: Clock;
  /** `base_url`: a share's page is `{base_url}/s/<id>`. */
  baseUrl: string;
}

export class ShareService {
  constructor(private readonly deps: ShareServiceDeps) {}

  /** Where the images a share shows come from (the page's policy allows it). */
  get imageOrigin(): string {
    return new URL(this.deps.baseUrl).origin;
  }

  async create(ownerId: string, input: CreateShareInput): Promise<ShareView> {
    const fileId = input.file_id ?? undefined;
    const albumId = input.album_id ?? undefined;
    if ((fileId === undefined) === (albumId === undefined)) {
      throw errors.validation([{ field: 'file_id', message: 'give exactly one of file_id and album_id' }]);
    }
    const now = this.deps.clock();
    let endsAtMs: number | undefined;
    if (input.expires_at !== undefined) {
      endsAtMs = Date.parse(input.expires_at);
      if (!Number.isFinite(endsAtMs)) {
        throw errors.validation([{ field: 'expires_at', message: 'must be an ISO 8601 time with offset' }]);
      }
      if (endsAtMs <= now.getTime()) {
        throw errors.validation([{ field: 'expires_at', message: 'must be in the future' }]);
      }
    }
    // The target must be the caller's: 404 otherwise, as for any other account's file or album.
    const name =
      fileId !== undefined
        ? (await this.deps.files.getOwn(ownerId, fileId)).original_name
        : (await this.deps.albums.getOwn(ownerId, albumId!)).name;
    const id = newShareId();
    const item: ShareItem = {
      ...shareKey(id),
      id,
      owner_id: ownerId,
      ...(fileId !== undefined ? { file_id: fileId } : {}),
      ...(albumId !== undefined ? { album_id: albumId } : {}),
      ...(input.password !== undefined ? { password_hash: await hashPassword(input.password) } : {}),
      ...(endsAtMs !== undefined ? { ends_at: isoWithOffset(new Date(endsAtMs)), ends_at_ms: endsAtMs } : {}),
      ...(input.max_views !== undefined ? { max_views: input.max_views } : {}),
      views: 0,
      created_at: isoWithOffset(now),
      gsi1pk: ownerShares(ownerId),
      gsi1sk: `${now.toISOString()}#${id}`,
    };
    await this.deps.table.put(item, { ConditionExpression: 'attribute_not_exists(pk)' });
    return this.view(item, name);
  }

  /** The caller's live shares (revoked ones leave the listing), newest first. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<ShareView>> {
    const page = await ownerIndexPage<ShareItem>(
      this.deps.table,
      ownerShares(ownerId),
      { pk: /^share#/, sk: 'share' },
      options,
    );
    const live = page.items.filter((share) => share.revoked_at === undefined);
    // Each link names what it shares: the files' and albums' names, read together.
    const targetOf = (share: ShareItem) =>
      share.file_id ? fileKey(share.file_id) : albumKey(share.album_id!);
    // Each key once: a batch read refuses a repeated key (two links to one file).
    const keys = [...new Map(live.map((share) => [targetOf(share).pk, targetOf(share)])).values()];
    const found = (await this.deps.table.getMany(keys)).filter((item) => item !== undefined);
    const names = new Map(found.map((item) => [item.pk, String(item.original_name ?? item.name)]));
    return {
      items: live.map((share) => this.view(share, names.get(targetOf(share).pk) ?? null)),
      next_cursor: page.next_cursor,
    };
  }

  /** Ends the caller's share: its opens answer 410 from now on, and it leaves the caller's listing. */
  async revoke(ownerId: string, id: string): Promise<{ id: string; revoked: true }> {
    if (!SHARE_ID.test(id)) throw errors.notFound('share: not found');
    await this.deps.table
      .update(shareKey(id), {
        UpdateExpression: 'SET revoked_at = :now REMOVE gsi1pk, gsi1sk',
        ConditionExpression:
          'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(revoked_at)',
        ExpressionAttributeValues: { ':now': isoWithOffset(this.deps.clock()), ':owner': ownerId },
      })
      .catch(conditionFailedAs(() => errors.notFound('share: not found')));
    return { id, revoked: true };
  }

  /**
   * Opens a share (no login): 404 unknown; 410 ended (expired, revoked, out of views, its file or album
   * deleted); 401 a missing or wrong password, 429 after 10 wrong ones (the login guard's back-off). A
   * successful open of a limited share counts one view, conditionally: of concurrent opens only those the
   * limit allows succeed, the rest are 410. An unlimited share's open, and a link preview's (`count` false), write nothing.
   */
  async open(id: string, password: string | undefined, visitor: string, count = true): Promise<OpenedShare> {
    const share = await this.live(id);
    await this.checkPassword(share, password, visitor);
    const target = await this.target(share);
    const counted = count ? await this.countView(share) : share;
    return {
      share: {
        id: counted.id,
        has_password: counted.password_hash !== undefined,
        expires_at: counted.ends_at ?? null,
        max_views: counted.max_views ?? null,
        views: counted.views,
      },
      album: target.album,
      items: await Promise.all(target.files.map((file) => this.itemView(share.id, file))),
    };
  }

  /**
   * How long anyone may keep the page of this open share: undefined with a password or a view limit (each
   * open is its own); else the seconds it has left (Infinity without an end).
   */
  cacheableFor(opened: OpenedShare): number | undefined {
    const { has_password, max_views, expires_at } = opened.share;
    if (has_password || max_views !== null) return undefined;
    if (expires_at === null) return Number.POSITIVE_INFINITY;
    return (Date.parse(expires_at) - this.deps.clock().getTime()) / 1000;
  }

  /**
   * One random image of the share (GET /s/{id}/random), counted as a view. A share with a password
   * answers 401 (the address carries none); one with no image left answers 410.
   */
  async random(id: string): Promise<string> {
    const share = await this.live(id);
    if (share.password_hash !== undefined) throw errors.unauthorized('password: this share needs one');
    const { files } = await this.target(share);
    if (files.length === 0) throw errors.gone(SHARE_GONE);
    const chosen = files[randomBytes(4).readUInt32BE(0) % files.length]!;
    await this.countView(share);
    return this.imageUrl(share.id, chosen);
  }

  /**
   * The stored key behind a share-scoped image link (GET /s/{id}/i/{grant}) and how long its answer may be
   * kept, checked on every request that reaches the function; counts no view. 404: not a grant of this
   * share, or a file no longer in its album. 410: the share revoked, expired or its file or album deleted,
   * and the grant expired (a view that spent the last of a limit keeps its images until then).
   */
  async image(id: string, grant: string): Promise<{ key: string; maxAgeSeconds: number }> {
    const granted = SHARE_ID.test(id) ? await this.deps.grants.read(id, grant) : undefined;
    if (!granted) throw errors.notFound('file: not found');
    const [share, file] = await Promise.all([
      this.deps.table.get<ShareItem>(shareKey(id)),
      this.deps.files.getItem(granted.fileId),
    ]);
    const now = this.deps.clock().getTime();
    if (!share) throw errors.notFound('share: not found');
    if (this.closed(share, now)) throw errors.gone(SHARE_GONE);
    if (granted.expiresAt <= now) throw errors.gone(this.ended(share) ? SHARE_GONE : LINK_EXPIRED);
    if (share.album_id !== undefined) {
      const album = await this.deps.albums.find(share.album_id);
      if (!album || album.owner_id !== share.owner_id) throw errors.gone(SHARE_GONE);
    }
    const inShare =
      share.file_id === undefined ? file?.album_id === share.album_id : file?.id === share.file_id;
    if (!file || file.owner_id !== share.owner_id || !inShare) {
      // A file share ends with its file; an album's file may only have left the album.
      throw share.file_id === undefined ? errors.notFound('file: not found') : errors.gone(SHARE_GONE);
    }
    if (isHeld(file.moderation)) throw errors.unavailableForLegalReasons(HELD_MESSAGE);
    // A share's door passes no edge function: an owner whose files are stopped (past the month's bandwidth)
    // is stopped here too (docs/IMAGES.md "Serving rules"). Only an image about to be served reads it.
    const tag = ownerTagOfKey(file.key);
    if (tag !== undefined && (await edgeRulesAt(this.deps.table, tag))?.s)
      throw errors.forbidden(REFUSAL_MESSAGES.stopped);
    const until = Math.min(granted.expiresAt, share.ends_at_ms ?? Number.POSITIVE_INFINITY);
    return {
      key: file.key,
      maxAgeSeconds: Math.min(SHARE_IMAGE_MAX_AGE_SECONDS, Math.floor((until - now) / 1000)),
    };
  }

  private async live(id: string): Promise<ShareItem> {
    const share = SHARE_ID.test(id) ? await this.deps.table.get<ShareItem>(shareKey(id)) : undefined;
    if (!share) throw errors.notFound('share: not found');
    if (this.ended(share)) throw errors.gone(SHARE_GONE);
    return share;
  }

  private ended(share: ShareItem): boolean {
    const spent = share.max_views !== undefined && share.views >= share.max_views;
    return spent || this.closed(share, this.deps.clock().getTime());
  }

  /** Revoked or past its end: nothing of it answers, not even the images a view already has. */
  private closed(share: ShareItem, now: number): boolean {
    return share.revoked_at !== undefined || (share.ends_at_ms !== undefined && share.ends_at_ms <= now);
  }

  // Proof of work after a few failures (docs/DESIGN.md 26) would be asked for here, before the slot.
  private async checkPassword(
    share: ShareItem,
    password: string | undefined,
    visitor: string,
  ): Promise<void> {
    if (share.password_hash === undefined) return;
    if (password === undefined || password === '')
      throw errors.unauthorized('password: this share needs one');
    const subject = guardSubjectOf(share.id, visitor);
    const admission = await this.deps.guard.admit(subject);
    if (!admission.admitted) {
      throw errors.tooManyRequests(
        admission.retryAfterSeconds,
        'Too many wrong passwords for this share; try again later',
      );
    }
    if (!(await verifyPassword(share.password_hash, password))) {
      throw errors.unauthorized('password: is wrong');
    }
    await this.deps.guard.reset(subject);
  }

  /** The file or the album's newest files, as they are now; 410 when the file or album is gone. */
  private async target(share: ShareItem): Promise<{ album: OpenedShare['album']; files: FileItem[] }> {
    if (share.file_id !== undefined) {
      const file = await this.deps.files.getItem(share.file_id);
      // Deleted by its owner or taken down by an administrator: the share ends with it.
      if (!file || file.owner_id !== share.owner_id) throw errors.gone(SHARE_GONE);
      if (isHeld(file.moderation)) throw errors.unavailableForLegalReasons(HELD_MESSAGE);
      return { album: null, files: [file] };
    }
    const album = await this.deps.albums.find(share.album_id ?? '');
    if (!album || album.owner_id !== share.owner_id) throw errors.gone(SHARE_GONE);
    const files = (await this.deps.albums.newestFiles(album.id, MAX_SHARE_ITEMS)).filter(
      (file) => !isHeld(file.moderation),
    );
    return { album: { name: album.name, description: album.description }, files };
  }

  /**
   * A limited share's view, only while it is live (not revoked, not expired, views left): else 410. An
   * unlimited share (already read live by this request) writes nothing: its views come from the access logs.
   */
  private async countView(share: ShareItem): Promise<ShareItem> {
    if (share.max_views === undefined) return share;
    return this.deps.table
      .update<ShareItem>(shareKey(share.id), {
        UpdateExpression: 'SET #views = #views + :one',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND ' +
          '(attribute_not_exists(max_views) OR #views < max_views) AND ' +
          '(attribute_not_exists(ends_at_ms) OR ends_at_ms > :now)',
        ExpressionAttributeNames: { '#views': 'views' },
        ExpressionAttributeValues: { ':one': 1, ':now': this.deps.clock().getTime() },
      })
      .catch(conditionFailedAs(() => errors.gone(SHARE_GONE)));
  }

  /** The file's link through this share: `{base_url}/s/<id>/i/<grant>`. */
  private async imageUrl(shareId: string, file: FileItem): Promise<string> {
    return `${this.pageUrl(shareId)}/i/${await this.deps.grants.issue(shareId, file.id)}`;
  }

  pageUrl(shareId: string): string {
    return `${this.deps.baseUrl.replace(/\/+$/, '')}/s/${shareId}`;
  }

  private async itemView(shareId: string, file: FileItem): Promise<ShareItemView> {
    const record = this.deps.files.record(file);
    const url = await this.imageUrl(shareId, file);
    return {
      url,
      thumbnail: renderableSourceOfKey(file.key) === undefined ? null : `${url}?${THUMBNAIL_QUERY}`,
      original_name: record.original_name,
      mime_type: record.mime_type,
      size: record.size,
      width: record.width,
      height: record.height,
    };
  }

  private view(share: ShareItem, name: string | null): ShareView {
    return {
      id: share.id,
      url: this.pageUrl(share.id),
      file_id: share.file_id ?? null,
      album_id: share.album_id ?? null,
      name,
      has_password: share.password_hash !== undefined,
      expires_at: share.ends_at ?? null,
      max_views: share.max_views ?? null,
      views: share.views,
      created_at: share.created_at,
    };
  }
}
