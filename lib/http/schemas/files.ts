// The file, album, token and usage routes' request bodies, queries and answers (docs/UPLOADS.md,
// docs/ALBUMS.md), as schemas: the API document is generated from them and the contract tests hold every
// answer to them.
import { ALBUM_DESCRIPTION_MAX, ALBUM_NAME_MAX } from '#lib/files/albums.ts';
import { SEARCH_MAX, TAGS_MAX } from '#lib/files/file-index.ts';
import { MODERATION_STATES } from '#lib/files/moderation-state.ts';
import { PERMISSIONS, type UploadRecord } from '#lib/files/record.ts';
import { FITS, FORMAT_PARAMS } from '#lib/files/rendition-query.ts';
import { refererHosts } from '#lib/platform/config/schema.ts';
import { DEFAULT_PAGE_SIZE, pageQueryFields } from '#lib/platform/db/paging.ts';
import * as z from '#lib/platform/zod.ts';
import { nameCharacters, pageOf, timestamp } from './common.ts';

/** What moderation made of a file (docs/MODERATION.md "Policy"). */
export const moderationView = z.object({
  state: z.enum(MODERATION_STATES),
  labels: z.array(z.object({ name: z.string(), score: z.number() })),
  score: z.nullable(z.number()),
  reviewed: z.optional(z.boolean()),
  error: z.optional(z.string()),
});

/** Tags as given: each normalized and checked by the service (lib/files/file-index.ts parseTags). */
const tagList = z.array(z.string().check(z.maxLength(64))).check(z.maxLength(TAGS_MAX * 2));

/** The record exactly as SPEC 2.3 names it on the wire (snake_case); strict, for contract tests too. */
export const uploadRecordSchema = z.strictObject({
  id: z.string().check(z.minLength(1)),
  key: z.string().check(z.regex(/^\d{4}\/\d{2}\/\d{2}\/[^/]+$/)),
  url: z.url(),
  // The 480-wide WebP rendition grids show (docs/IMAGES.md); null for a type the renderer cannot read.
  thumbnail: z
    .nullable(z.url())
    .check(
      z.describe(
        'The 480-wide WebP rendition, the `thumb` preset: {base_url}/i/<key>?p=thumb (older records: ' +
          '?w=480&q=75&f=webp, still served; docs/IMAGES.md); null for a type the renderer cannot read (BMP, ICO).',
      ),
    ),
  original_name: z.string().check(z.minLength(1)),
  filename: z.string().check(z.minLength(1)),
  hash: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  permission: z.enum(PERMISSIONS),
  // The album the file is in (docs/DESIGN.md 16): at most one; null outside any.
  album_id: z.nullable(z.string()),
  tags: z
    .array(z.string())
    .check(z.describe("The owner's tags (docs/UPLOADS.md); always empty in the public gallery.")),
  size: z.number().check(z.int(), z.minimum(1)),
  mime_type: z.string().check(z.minLength(1)),
  width: z.number().check(z.int(), z.minimum(0)),
  height: z.number().check(z.int(), z.minimum(0)),
  created_at: timestamp,
  // docs/UPLOADS.md "Expiring uploads": past it the file is gone everywhere; null: it never expires.
  expires_at: z.nullable(timestamp),
  // Owners and administrators see it once the file is classified (docs/MODERATION.md).
  moderation: z.optional(moderationView),
}) satisfies z.ZodMiniType<UploadRecord>;

/** POST /api/v1/files/{id}/rendition-url: the rendition asked (docs/IMAGES.md "Parameters"). */
export const renditionUrlBody = z.strictObject({
  w: z.optional(z.number().check(z.int())),
  h: z.optional(z.number().check(z.int())),
  fit: z.optional(z.enum(FITS)),
  q: z.optional(z.number().check(z.int())),
  f: z.optional(z.enum(FORMAT_PARAMS)),
});

export const renditionUrlResponse = z.object({
  url: z.url().check(z.describe('The signed rendition URL, {base_url}/i/<key>?<query>&s=<signature>.')),
});

export const usageResponse = z.object({
  used_bytes: z.number().check(z.int()),
  file_count: z.number().check(z.int()),
  quota_bytes: z.nullable(z.number().check(z.int(), z.minimum(0))),
  plan: z.nullable(z.object({ id: z.string(), name: z.string(), expires_at: z.nullable(z.string()) })),
  bandwidth_bytes_used: z
    .number()
    .check(
      z.int(),
      z.minimum(0),
      z.describe(
        "Bytes of the owner's files served this month (UTC), as counted from the CDN's logs so far.",
      ),
    ),
  bandwidth_bytes: z
    .nullable(z.number().check(z.int(), z.minimum(0)))
    .check(
      z.describe(
        "The month's cap in force: the plan's `bandwidth_bytes`, else the default; null: unlimited.",
      ),
    ),
});

export const filePage = pageOf(uploadRecordSchema);
/** The back office's listing: each record with its owner (the user's own listing names none). */
export const adminFileRecord = z.extend(uploadRecordSchema, {
  owner_id: z.string().check(z.describe("The owner's account id (the `owner_id` filter takes it).")),
  owner_username: z
    .nullable(z.string())
    .check(z.describe("The owner's username; null when the account no longer exists.")),
});
export const adminFilePage = pageOf(adminFileRecord);
/** GET /api/v1/admin/files/find: a file's URL, share link, key or id. */
export const adminFindQuery = z.object({
  ref: z.string().check(z.trim(), z.minLength(1), z.maxLength(2048)),
});
/** The owner's trash (docs/UPLOADS.md "Trash"): each file with when it went there and when it is purged. */
export const trashPage = pageOf(z.extend(uploadRecordSchema, { trashed_at: timestamp, purge_at: timestamp }));
export const trashEmptied = z.object({ deleted: z.number().check(z.int(), z.minimum(0)) });
export const presignResponse = z.object({
  key: z.string(),
  url: z.url(),
  method: z.literal('PUT'),
  headers: z.record(z.string(), z.string()),
  expires_at: timestamp,
});
export const tokenView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  last_used_at: z.nullable(timestamp),
  created_at: timestamp,
});

export const adminFilesQuery = z.pipe(
  z.extend(pageQueryFields, {
    owner_id: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(128))),
  }),
  z.transform(({ owner_id, limit, cursor }) => ({
    ownerId: owner_id,
    limit: limit ?? DEFAULT_PAGE_SIZE,
    ...(cursor ? { cursor } : {}),
  })),
);

export const presignBody = z.object({
  mime_type: z.string().check(z.trim(), z.minLength(1), z.maxLength(255)),
  size: z.number().check(z.int(), z.minimum(1)),
  filename: z.optional(z.string().check(z.maxLength(1024))),
  permission: z.optional(z.string().check(z.maxLength(32))),
  album_id: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
  tags: z.optional(tagList),
  // docs/UPLOADS.md "Expiring uploads": one of them, checked (400 naming it) by lib/files/expiry.ts.
  expires_in: z.optional(z.number()),
  expires_at: z.optional(z.string().check(z.maxLength(64))),
});

export const permissionBody = z.object({ permission: z.enum(PERMISSIONS) });
/** PUT /api/v1/files/{id}/tags: the file's tags, all of them (an empty list removes every one). */
export const tagsBody = z.object({ tags: tagList });
/** The owner's PATCH: the permission, the album (null takes the file out), or both. */
export const filePatchBody = z.object({
  permission: z.optional(z.enum(PERMISSIONS)),
  album_id: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
});
export const filesQuery = z.pipe(
  z.extend(pageQueryFields, {
    album_id: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    tag: z.optional(z.string().check(z.maxLength(64))),
    q: z.optional(z.string().check(z.maxLength(SEARCH_MAX))),
  }),
  z.transform(({ album_id, tag, q, limit, cursor }) => ({
    albumId: album_id,
    tag,
    q,
    limit: limit ?? DEFAULT_PAGE_SIZE,
    ...(cursor ? { cursor } : {}),
  })),
);
export const albumName = z
  .string()
  .check(z.trim(), z.minLength(1), z.maxLength(ALBUM_NAME_MAX), nameCharacters());
export const albumDescription = z.string().check(z.trim(), z.maxLength(ALBUM_DESCRIPTION_MAX));
export const albumView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  file_count: z.number().check(z.int(), z.minimum(0)),
  cover_url: z.nullable(z.url()),
  created_at: timestamp,
  updated_at: timestamp,
});
/** POST /api/v1/upload/confirm: the key a presign gave. */
export const confirmBody = z.object({ key: z.string().check(z.trim(), z.minLength(1), z.maxLength(1024)) });
export const albumCreateBody = z.object({ name: albumName, description: z.optional(albumDescription) });
export const albumPage = z.object({ items: z.array(albumView), next_cursor: z.nullable(z.string()) });
export const albumPatchBody = z.object({
  name: z.optional(albumName),
  description: z.optional(albumDescription),
});
export const tokenCreateBody = z.object({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(64), nameCharacters()),
});
/** A new token: its value, shown this once. */
export const tokenCreated = z.extend(z.omit(tokenView, { last_used_at: true }), { token: z.string() });
export const tokenList = z.array(tokenView);
export const tokenRevoked = z.object({ id: z.string(), revoked: z.literal(true) });

/**
 * The owner's hotlink rules (docs/IMAGES.md "Serving rules"): the sites whose pages may show their files
 * (`example.com`; `*.example.com` for its subdomains), and whether a request with no Referer may. `hosts`
 * null: any site may.
 */
export const hotlinkRules = z.strictObject({
  hosts: z.nullable(refererHosts),
  allow_empty: z.boolean(),
});
