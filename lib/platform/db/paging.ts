// Cursor pages, one shape for every list (files, gallery, orders) and one query schema for asking for them.

import * as z from '#lib/platform/zod.ts';

/** A page of a list; pass `next_cursor` back as `cursor` for the next one (null on the last page). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** `?limit=` of every listing, before its default: a whole number from 1 to 100. */
export const pageLimitField = z.optional(
  z.pipe(
    z.pipe(
      z.string().check(z.regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)),
      z.transform(Number),
    ),
    z
      .number()
      .check(
        z.int(),
        z.minimum(1, 'must be at least 1'),
        z.maximum(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`),
      ),
  ),
);

/** The fields of `?limit=&cursor=`, before the defaults: limit a whole number from 1 to 100, the cursor opaque. */
export const pageQueryFields = z.object({
  limit: pageLimitField,
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});

/** `?limit=&cursor=`: limit a whole number from 1 to 100 (default 20); the cursor opaque. */
export const pageQuery = z.pipe(
  pageQueryFields,
  z.transform(({ limit, cursor }) => ({
    limit: limit ?? DEFAULT_PAGE_SIZE,
    ...(cursor ? { cursor } : {}),
  })),
);
