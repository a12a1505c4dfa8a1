// The share-link routes' request bodies and answers (docs/DESIGN.md 16), as schemas: the API document is
// generated from them and the contract tests hold every answer to them.
import { MAX_SHARE_VIEWS, SHARE_PASSWORD_MAX } from '#lib/files/shares.ts';
import * as z from '#lib/platform/zod.ts';
import { altchaField, timestamp } from './common.ts';

export const sharePassword = z.string().check(z.minLength(1), z.maxLength(SHARE_PASSWORD_MAX));

export const createBody = z.object({
  file_id: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
  album_id: z.optional(z.nullable(z.string().check(z.maxLength(64)))),
  password: z.optional(sharePassword),
  expires_at: z.optional(
    z
      .string()
      .check(
        z.regex(
          /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/,
          'must be an ISO 8601 time with offset',
        ),
      ),
  ),
  max_views: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_SHARE_VIEWS))),
});

export const shareView = z.object({
  id: z.string(),
  url: z.url(),
  file_id: z.nullable(z.string()),
  album_id: z.nullable(z.string()),
  name: z
    .nullable(z.string())
    .check(z.describe("The shared file's name or the album's; null once it is gone.")),
  has_password: z.boolean(),
  expires_at: z.nullable(timestamp),
  max_views: z.nullable(z.number().check(z.int())),
  views: z.number().check(z.int(), z.minimum(0)),
  created_at: timestamp,
});

export const openedView = z.object({
  share: z.object({
    id: z.string(),
    has_password: z.boolean(),
    expires_at: z.nullable(timestamp),
    max_views: z.nullable(z.number().check(z.int())),
    // Counted for a link with a view limit (this open included); an unlimited link's opens are not
    // counted per request (docs/ALBUMS.md), so it may answer 0.
    views: z.number().check(z.int(), z.minimum(0)),
  }),
  album: z.nullable(z.object({ name: z.string(), description: z.string() })),
  items: z.array(
    z.object({
      url: z.url(),
      thumbnail: z.nullable(z.url()),
      original_name: z.string(),
      mime_type: z.string(),
      size: z.number().check(z.int()),
      width: z.number().check(z.int()),
      height: z.number().check(z.int()),
    }),
  ),
});
export const shareList = z.object({ items: z.array(shareView), next_cursor: z.nullable(z.string()) });
export const shareRevoked = z.object({ id: z.string(), revoked: z.literal(true) });
export const openBody = z.object({
  password: z.optional(z.string().check(z.maxLength(SHARE_PASSWORD_MAX))),
  altcha: altchaField,
});
