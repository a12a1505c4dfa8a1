// A file's own look-up items (docs/UPLOADS.md "Tags and search"): one per tag under
// `filetag#<owner>#<tag>`, sorted newest first like the owner's listing, and one under
// `filename#<owner>`, sorted by the lower-cased original name, so that a tag filter and a name-prefix
// search are each one Query of one partition (no scan). Each holds only the file's id; they are written in
// the transaction that writes or changes the record and removed in the one that deletes it.
import { errors } from '#lib/core/errors.ts';
import type { Key, TransactItem } from '#lib/platform/db/table.ts';

/** At most this many tags a file. */
export const TAGS_MAX = 20;
/** The longest name prefix searched. */
export const SEARCH_MAX = 100;
/** A tag, once trimmed and lower-cased: 1 to 32 letters, digits, `-` or `_`. */
const TAG = /^[\p{L}\p{N}_-]{1,32}$/u;

/**
 * Tags as given (a form's comma-separated field split, or a JSON list): trimmed, lower-cased, empty ones
 * and repeats dropped; a 400 naming the field for a bad one or more than TAGS_MAX.
 */
export function parseTags(values: readonly string[]): string[] {
  const tags = [...new Set(values.map((value) => value.normalize('NFC').trim().toLowerCase()))].filter(
    (tag) => tag !== '',
  );
  const bad = tags.findIndex((tag) => !TAG.test(tag));
  if (bad >= 0) throw errors.badRequest(`tags[${bad}]: must be 1 to 32 letters, digits, - or _`);
  if (tags.length > TAGS_MAX) throw errors.badRequest(`tags: at most ${TAGS_MAX} tags a file`);
  return tags;
}

/** The partition of one owner's files under one tag. */
export const tagPartition = (ownerId: string, tag: string) => `filetag#${ownerId}#${tag}`;
/** The partition of one owner's files by name. */
export const namePartition = (ownerId: string) => `filename#${ownerId}`;
/** How names are compared: NFC, lower case. */
export const searchName = (name: string) => name.normalize('NFC').toLowerCase();

/**
 * The mark of a record written with its name item: records from before have none until
 * `npm run migrate:shards` writes their name item (lib/files/migrations.ts).
 */
export const NAME_INDEXED = { name_indexed: true } as const;

/** What of a file its look-up items come from. */
export interface IndexedFile {
  id: string;
  owner_id: string;
  original_name: string;
  /** `<ISO time>#<id>`: the owner listing's order */
  gsi1sk: string;
  tags?: string[] | undefined;
  /** The record's TTL (epoch seconds) when it expires: its look-up items carry it too. */
  expires_at?: number | undefined;
}

/** A look-up item of `file`: its file's id, and its file's TTL when it expires. */
export const indexItem = (file: IndexedFile, key: Key) => ({
  ...key,
  file_id: file.id,
  ...(file.expires_at ? { expires_at: file.expires_at } : {}),
});

const tagKey = (file: IndexedFile, tag: string): Key => ({
  pk: tagPartition(file.owner_id, tag),
  sk: file.gsi1sk,
});
/** The key of a file's name item. */
export const nameKey = (file: IndexedFile): Key => ({
  pk: namePartition(file.owner_id),
  sk: `${searchName(file.original_name)}#${file.id}`,
});

/** The keys of a file's tag items: one per tag in `tags` (its own by default). */
export function tagKeys(file: IndexedFile, tags = file.tags ?? []): Key[] {
  return tags.map((tag) => tagKey(file, tag));
}

/** Writes a new file's look-up items (its name, its tags). */
export function indexPuts(file: IndexedFile): TransactItem[] {
  return [nameKey(file), ...tagKeys(file)].map((key) => ({ Put: { Item: indexItem(file, key) } }));
}

/** Removes a file's look-up items. */
export function indexDeletes(file: IndexedFile): TransactItem[] {
  return [nameKey(file), ...tagKeys(file)].map((Key) => ({ Delete: { Key } }));
}

/** A write's condition that the file's tags are still as read (their items are the ones it changes). */
export function tagsAsRead(file: IndexedFile): { condition: string; values: Record<string, unknown> } {
  return file.tags?.length
    ? { condition: 'tags = :tags', values: { ':tags': file.tags } }
    : { condition: 'attribute_not_exists(tags)', values: {} };
}
