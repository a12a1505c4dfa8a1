// The edge's deny-list of taken-down files (docs/UPLOADS.md "Deleting"): the takedowns worker lists each
// taken-down file's key, and the /i/* viewer-request function answers 404 for a listed key before the cache
// is consulted (infra/edge.ts), so the file and every rendition of it stop being served within a minute
// or two at any rate of takedowns, whatever CloudFront's invalidation allowance. In AWS the edge reads
// CloudFront KeyValueStore (kvs-deny-list.ts); the table keeps the record of what is listed until when,
// which the worker sweeps and the local server reads as its own edge (infra/local/app.ts). An entry is kept
// for `cdn.deleted_max_age_seconds`: past it the edge holds no copy, and the bucket has none.
import type { Item, Table } from '#lib/platform/db/table.ts';

/** Where the edge reads the deny-list: CloudFront KeyValueStore in AWS; nothing where no CDN caches. */
export interface EdgeDenyList {
  /** Lists these object keys, each kept until `untilMs`. */
  put(keys: string[], untilMs: number): Promise<void>;
  /** Takes these object keys off the list. */
  remove(keys: string[]): Promise<void>;
  /** Sets these entries (key, value) and deletes those keys: the owners' rules (lib/files/owner-rules.ts). */
  write(puts: Array<[string, string]>, removals: string[]): Promise<void>;
}

/** Where no CDN is deployed (locally, in tests): the table's record is the whole deny-list. */
export const noEdgeDenyList: EdgeDenyList = {
  put: async () => {},
  remove: async () => {},
  write: async () => {},
};

/** The partition name of deny-list records in the `listing` index (`denied#<n>`, sorted by their end). */
export const DENIED_LISTING_NAME = 'denied';
const KEY_PREFIX = 'denied#';

export const deniedKey = (objectKey: string) => ({ pk: `${KEY_PREFIX}${objectKey}`, sk: 'denied' });

/** The object key a record stands for, from its key alone. */
export const deniedObjectKeyOf = (item: Item): string => String(item.pk).slice(KEY_PREFIX.length);

/** Whether the edge refuses this object key now (the local server plays the edge with it). */
export async function deniedAtEdge(table: Table, objectKey: string): Promise<boolean> {
  const item = await table.get(deniedKey(objectKey), { consistent: false });
  return item !== undefined && Number(item.until_ms) > table.clock().getTime();
}
