// The upload record of SPEC 2.3 and the facts it is built from, for both the multipart and the presign path.
import { createHash } from 'node:crypto';
import type { ImageKind } from '#lib/files/metadata/types.ts';
import { fileTooLarge, UploadError } from './errors.ts';
import { measureImage } from './measure.ts';
import type { Moderation } from './moderation-state.ts';
import { kindFromMimeType, notAllowedError, type SniffedType, sniffImage } from './sniff.ts';

export const PERMISSIONS = ['private', 'public'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** A stored file as SPEC 2.3 names it on the wire (snake_case); its schema is the edge's (lib/http/schemas/files.ts). */
export interface UploadRecord {
  id: string;
  key: string;
  url: string;
  /** The 480-wide WebP rendition grids show (docs/IMAGES.md); null for a type the renderer cannot read. */
  thumbnail: string | null;
  original_name: string;
  filename: string;
  hash: string;
  permission: Permission;
  /** The album the file is in (docs/DESIGN.md 16): at most one; null outside any. */
  album_id: string | null;
  /** Its owner's tags (docs/UPLOADS.md "Tags and search"); none shown in the public gallery. */
  tags: string[];
  size: number;
  mime_type: string;
  width: number;
  height: number;
  created_at: string;
  /** When the file stops being served and is deleted (docs/UPLOADS.md "Expiring uploads"); null: never. */
  expires_at: string | null;
  /** What moderation made of it (docs/MODERATION.md), once classified: shown to its owner and administrators. */
  moderation?: Moderation;
}

/** What the bytes themselves tell: hash, size, mime_type, width, height and the stored extension. */
export interface UploadFacts {
  sha256: string;
  size: number;
  mimeType: string;
  ext: string;
  kind: ImageKind;
  width: number;
  height: number;
}

/** The optional `permission` field: absent or empty means `private` (DESIGN 6); anything else is 400. */
export function parsePermission(value: string | undefined): Permission {
  if (value === undefined || value.trim() === '') return 'private';
  const normalized = value.trim().toLowerCase();
  if ((PERMISSIONS as readonly string[]).includes(normalized)) return normalized as Permission;
  throw new UploadError('bad_request', `permission: must be one of ${PERMISSIONS.join(', ')}`);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface InspectUploadOptions {
  allowed: readonly string[];
  maxBytes: number;
  /**
   * The media type the client declared (presign): the sniffed kind must match it, else 415. A signed
   * Content-Type only fixes the header, not what the bytes are.
   */
  expectedMimeType?: string;
  /** Already computed while streaming (multipart path); saves a second pass over the bytes. */
  sha256?: string;
}

/**
 * Size check, sniff, measure and hash in one call: 400 when empty, 413 over maxBytes, 415 when the type
 * is unknown, not allowed or not the declared one.
 */
export async function inspectUpload(bytes: Buffer, options: InspectUploadOptions): Promise<UploadFacts> {
  return factsOf(bytes, await checkAndSniff(bytes, options), options.sha256);
}

/** The facts of bytes of a sniffed type, measured here; hashed unless their SHA-256 is given. */
export function factsOf(bytes: Buffer, sniffed: SniffedType, sha256?: string): UploadFacts {
  const { width, height } = measureImage(bytes);
  const { mimeType, ext, kind } = sniffed;
  return { sha256: sha256 ?? sha256Hex(bytes), size: bytes.length, mimeType, ext, kind, width, height };
}

/**
 * The checks of inspectUpload without measuring or hashing: 400 when empty, 413 over maxBytes, 415 when
 * the type is unknown, not allowed or not the declared one. The sniffed type of the bytes.
 */
export async function checkAndSniff(
  bytes: Buffer,
  options: Omit<InspectUploadOptions, 'sha256'>,
): Promise<SniffedType> {
  if (bytes.length === 0) throw new UploadError('bad_request', 'file: is empty');
  if (bytes.length > options.maxBytes) throw fileTooLarge(options.maxBytes);
  const sniffed = await sniffImage(bytes, options.allowed);
  if (options.expectedMimeType !== undefined) {
    const expected = kindFromMimeType(options.expectedMimeType);
    if (expected === undefined) throw notAllowedError(options.expectedMimeType, options.allowed);
    if (expected !== sniffed.kind) {
      throw new UploadError(
        'unsupported_media_type',
        `file: content is ${sniffed.mimeType} but ${options.expectedMimeType} was declared`,
      );
    }
  }
  return sniffed;
}
