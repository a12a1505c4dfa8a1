// Builds the SPEC 2.3 record from checked facts: pure, and free of the byte pipeline (sniffing, measuring),
// so code that only stores or reads records (the share links' function) does not bundle it.
import { isoWithOffset } from '#lib/platform/time.ts';
import { expiryOnWire } from './expiry.ts';
import { sanitizeOriginalName } from './names.ts';
import type { Permission, UploadFacts, UploadRecord } from './record.ts';
import { thumbnailOf } from './rendition-query.ts';

export interface BuildUploadRecordInput {
  id: string;
  facts: UploadFacts;
  /** the client's name; sanitised again here (idempotent), `file` when absent */
  originalName: string | undefined;
  permission: Permission;
  /** the service's public base URL, e.g. https://files.example.com (a trailing slash is dropped) */
  baseUrl: string;
  /** when the record is created; created_at is its UTC form */
  now: Date;
  /** where the bytes live: from storedFilename/storageKey (or the presigned key on confirm) */
  filename: string;
  key: string;
  /** the caller's album it goes into (checked by the caller), else none */
  albumId?: string | null | undefined;
  /** its tags, already parsed (lib/files/file-index.ts parseTags), else none */
  tags?: string[] | undefined;
  /** When it expires (epoch seconds), if it does. */
  expiresAt?: number | undefined;
}

/** The SPEC 2.3 record. Pure: the caller supplies id, clock, location and facts. */
export function buildUploadRecord(input: BuildUploadRecordInput): UploadRecord {
  const { facts } = input;
  return {
    id: input.id,
    key: input.key,
    url: `${input.baseUrl.replace(/\/+$/, '')}/i/${input.key}`,
    thumbnail: thumbnailOf(input.baseUrl, input.key),
    original_name: sanitizeOriginalName(input.originalName),
    filename: input.filename,
    hash: facts.sha256,
    permission: input.permission,
    album_id: input.albumId ?? null,
    tags: input.tags ?? [],
    size: facts.size,
    mime_type: facts.mimeType,
    width: facts.width,
    height: facts.height,
    created_at: isoWithOffset(input.now),
    expires_at: expiryOnWire(input.expiresAt),
  };
}
