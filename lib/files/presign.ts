// POST /api/v1/upload/presign: a pending upload in the table and a signed PUT of exactly its declared type
// and size to `incoming/<key>`, where unchecked bytes are never served. The declared size is held against
// the owner's quota until the upload is confirmed or the presign expires (lib/files/quota-presign.ts).
import { randomUUID } from 'node:crypto';
import { type Clock, epochSeconds } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { AlbumCheck } from './direct-upload.ts';
import { fileTooLarge } from './errors.ts';
import { expiryOrDefault, parseExpiry } from './expiry.ts';
import { parseTags } from './file-index.ts';
import { expiryMark, newFilenameSuffix, sanitizeOriginalName, storageKey, storedFilename } from './names.ts';
import { type PendingItem, type PendingUploads, PRESIGN_TTL_SECONDS, pendingKey } from './pending.ts';
import { incomingKey } from './prefixes.ts';
import type { QuotaAccount, QuotaService } from './quota-service.ts';
import { parsePermission } from './record.ts';
import { KIND_INFO, kindFromMimeType, normalizeAllowed, notAllowedError } from './sniff.ts';

export interface PresignInput {
  mime_type: string;
  size: number;
  filename?: string | undefined;
  permission?: string | undefined;
  album_id?: string | null | undefined;
  tags?: readonly string[] | undefined;
  expires_in?: number | undefined;
  expires_at?: string | undefined;
}

export interface PresignResult {
  key: string;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expires_at: string;
}

export interface PresignDeps {
  pending: PendingUploads;
  storage: FileStorage;
  quota: QuotaService;
  clock: Clock;
  /** The presign limit in force (`upload.presign_max_bytes`, never above what confirm can read). */
  presignMaxBytes: number;
  allowedTypes: readonly string[];
  /** Checks the album a presign names is the caller's (docs/DESIGN.md 16). */
  albums: AlbumCheck;
}

export class PresignService {
  constructor(private readonly deps: PresignDeps) {}

  /**
   * Holds the declared size against the owner's quota (507 when the usage and the presigns outstanding
   * leave no room), records a pending upload (owner, key, declared type and size; expires in 15 minutes)
   * and signs its PUT.
   */
  async presign(owner: QuotaAccount, input: PresignInput): Promise<PresignResult> {
    const ownerId = owner.id;
    const { allowedTypes, presignMaxBytes } = this.deps;
    const kind = kindFromMimeType(input.mime_type);
    if (kind === undefined || !normalizeAllowed(allowedTypes).includes(kind)) {
      throw notAllowedError(input.mime_type, allowedTypes);
    }
    if (input.size > presignMaxBytes) throw fileTooLarge(presignMaxBytes);
    const permission = parsePermission(input.permission);
    const tags = parseTags(input.tags ?? []);
    const albumId = await this.deps.albums.requireOwn(ownerId, input.album_id);
    const { mimeType, ext } = KIND_INFO[kind];
    const now = this.deps.clock();
    const asked = parseExpiry(input, now);
    // The usage the hold decides on, read first: its plan's default retention is fixed at the presign.
    const usage = await this.deps.quota.presignRead(owner);
    const fileExpiresAt = expiryOrDefault(asked, now, usage.retentionDays);
    const expiresAt = new Date(now.getTime() + PRESIGN_TTL_SECONDS * 1000);
    const id = randomUUID();
    const key = storageKey(
      now,
      storedFilename(id, newFilenameSuffix(ownerId) + expiryMark(fileExpiresAt), ext),
    );
    const pending: PendingItem = {
      ...pendingKey(key),
      id,
      owner_id: ownerId,
      key,
      mime_type: mimeType,
      kind,
      size: input.size,
      original_name: sanitizeOriginalName(input.filename),
      permission,
      ...(albumId ? { album_id: albumId } : {}),
      ...(tags.length > 0 ? { tags } : {}),
      ...(fileExpiresAt ? { file_expires_at: fileExpiresAt } : {}),
      created_at: isoWithOffset(now),
      expires_at: epochSeconds(expiresAt),
    };
    // The hold and the pending upload in one transaction (one wait, nothing half-written); an account
    // without a quota holds nothing and only records the pending upload.
    const held = await this.deps.quota.holdPresigned(
      owner,
      { id, bytes: input.size, expiresAt: pending.expires_at },
      [{ Put: { Item: pending, ConditionExpression: 'attribute_not_exists(pk)' } }],
      usage,
    );
    if (!held) await this.deps.pending.create(pending);
    const url = await this.deps.storage.presignPut(incomingKey(key), {
      contentType: mimeType,
      size: input.size,
      expiresInSeconds: PRESIGN_TTL_SECONDS,
      signingDate: now,
    });
    return {
      key,
      url,
      method: 'PUT',
      headers: { 'Content-Type': mimeType, 'Content-Length': String(input.size) },
      expires_at: isoWithOffset(expiresAt),
    };
  }
}
