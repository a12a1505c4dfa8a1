// What an upload stores: its bytes without their metadata (`upload.strip_metadata`, docs/UPLOADS.md), and
// the facts of the record (hash, size, dimensions) taken from exactly those stored bytes.

import { stripMetadata } from '#lib/files/metadata/index.ts';
import { log } from '#lib/platform/log.ts';
import { UploadError } from './errors.ts';
import { factsOf, type UploadFacts } from './record.ts';
import type { SniffedType } from './sniff.ts';

export interface StoredUpload {
  /** The bytes to store (the input itself when nothing was removed or stripping is off). */
  bytes: Buffer;
  /** True when `bytes` differ from the input: they must be written, a server-side copy would not do. */
  rewritten: boolean;
  /** hash, size and dimensions of `bytes`, the sniffed type of the input. */
  facts: UploadFacts;
}

export interface StoreOptions {
  strip: boolean;
  /** SHA-256 of the input, when already computed while streaming (saves a pass if nothing changes). */
  inputSha256?: string | undefined;
  /** Where the upload is going, for the log line of an image left as it is. */
  key: string;
}

/**
 * The stored form of sniffed, size-checked input. A container the stripper refuses (malformed) is a 415
 * `file: <reason>`: storing it could keep metadata nobody looked at. One it does not rewrite (GIF, BMP, ICO)
 * is stored as it is, with the reason logged.
 */
export function storedUpload(input: Buffer, sniffed: SniffedType, options: StoreOptions): StoredUpload {
  let bytes = input;
  if (options.strip) {
    const result = stripMetadata(input, sniffed.kind);
    if (result.kind === 'refused') throw new UploadError('unsupported_media_type', `file: ${result.reason}`);
    if (result.kind === 'unchanged') {
      log.info('upload stored with its metadata', { key: options.key, reason: result.reason });
    } else {
      bytes = result.bytes;
      if (result.removed.length > 0) {
        log.debug('metadata removed from an upload', { key: options.key, removed: result.removed });
      }
    }
  }
  const rewritten = bytes !== input;
  return { bytes, rewritten, facts: factsOf(bytes, sniffed, rewritten ? undefined : options.inputSha256) };
}
