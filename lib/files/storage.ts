// Where uploads wait in the bucket: presigned uploads under `incoming/` until confirmed. The S3 adapter is
// lib/platform/storage/file-storage.ts (exported here too for infra/local/app.ts, which still imports it).
import { INCOMING_PREFIX } from './prefixes.ts';

export { FileStorage } from '#lib/platform/storage/file-storage.ts';

export function incomingKey(key: string): string {
  return `${INCOMING_PREFIX}${key}`;
}
