// Storing uploads: the direct multipart upload, and the presigned upload with its confirmation. Both end
// in the same record and the same per-owner dedupe (FileRepository.createDeduped).
import { randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import { StripPlan } from '#lib/files/metadata/png-stream.ts';
import { type Invalidator, noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import {
  ConditionFailedError,
  epochSeconds,
  type Item,
  isExpired,
  type Table,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { fileTooLarge, UploadError } from './errors.ts';
import { type CreateOutcome, type FileItem, type FileRepository, fileItemOf, fileKey } from './files.ts';
import { type InspectedUpload, inspectStream, replayPlan } from './incoming.ts';
import { parseUploadForm } from './multipart.ts';
import {
  newFilenameSuffix,
  parseStorageKey,
  sanitizeOriginalName,
  storageKey,
  storedFilename,
} from './names.ts';
import type { QuotaAccount, QuotaService } from './quota-service.ts';
import {
  buildUploadRecord,
  checkAndSniff,
  type Permission,
  parsePermission,
  type UploadFacts,
  type UploadRecord,
} from './record.ts';
import { type ImageKind, KIND_INFO, kindFromMimeType, normalizeAllowed, notAllowedError } from './sniff.ts';
import { type FileStorage, incomingKey, ObjectChangedError } from './storage.ts';
import { storedUpload } from './stored-bytes.ts';

/** How long a presigned upload (its URL and its pending item) stays valid. */
export const PRESIGN_TTL_SECONDS = 15 * 60;
/** How long a confirmed presign is remembered when it was settled onto an existing file (dedupe). */
export const CONFIRMED_MARKER_TTL_SECONDS = 24 * 60 * 60;
/** Bytes of a confirmed object kept in memory for sniffing and measuring; the rest is only hashed. */
export const CONFIRM_HEAD_BYTES = 1024 * 1024;

export interface UploadLimits {
  maxBytes: number;
  presignMaxBytes: number;
  allowedTypes: readonly string[];
  baseUrl: string;
  /** `upload.strip_metadata`: store images without EXIF, GPS, XMP, IPTC and comments. */
  stripMetadata: boolean;
}

export const pendingKey = (key: string) => ({ pk: `pending#${key}`, sk: 'pending' });

interface PendingItem extends Item {
  pk: string;
  sk: string;
  id: string;
  owner_id: string;
  key: string;
  mime_type: string;
  kind: ImageKind;
  size: number;
  original_name: string;
  permission: Permission;
  created_at: string;
  expires_at: number;
  confirmed_file_id?: string;
}

export interface PresignInput {
  mime_type: string;
  size: number;
  filename?: string | undefined;
  permission?: string | undefined;
}

export interface PresignResult {
  key: string;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expires_at: string;
}

export interface DirectUploadInput {
  body: Buffer;
  contentType: string;
  contentLength?: number | undefined;
}

class NotUploadedError extends Error {}

/** What confirm read from `incoming/<key>`: what it stores (with its facts) and the version's ETag. */
interface InspectedIncoming {
  upload: InspectedUpload;
  etag: string | undefined;
}

export class UploadService {
  constructor(
    private readonly table: Table,
    private readonly files: FileRepository,
    private readonly storage: FileStorage,
    private readonly limits: UploadLimits,
    private readonly quota: QuotaService,
    /** The CDN in front of /i/*, which may hold a deleted file's bytes for up to a year. */
    private readonly cdn: Invalidator = noInvalidator,
  ) {}

  /**
   * POST /api/v1/upload. Parse (streamed, bounded, hashed on the fly), sniff, measure; the owner's
   * existing file with these bytes if there is one (free: no quota is spent); else the record, the hash
   * claim and the reservation of its bytes in the owner's usage in one transaction while one PutObject
   * stores the bytes under a fresh unique key. Whoever does not create the record (a duplicate, the loser
   * of a race, an upload over the quota: 507) deletes its own object after its PutObject has finished.
   */
  async uploadDirect(owner: QuotaAccount, input: DirectUploadInput): Promise<UploadRecord> {
    const ownerId = owner.id;
    const { maxBytes, allowedTypes } = this.limits;
    const form = await parseUploadForm({
      body: input.body,
      contentType: input.contentType,
      maxBytes,
      ...(input.contentLength !== undefined ? { contentLength: input.contentLength } : {}),
    });
    const file = form.file;
    const permission = parsePermission(form.fields.permission);
    // The limit applies to what was sent (stripping may add a few bytes); everything else to what is stored.
    const sniffed = await checkAndSniff(file.bytes, { allowed: allowedTypes, maxBytes });

    const now = this.table.clock();
    const id = randomUUID();
    const filename = storedFilename(id, newFilenameSuffix(), sniffed.ext);
    const key = storageKey(now, filename);
    const { bytes, facts } = storedUpload(file.bytes, sniffed, {
      strip: this.limits.stripMetadata,
      inputSha256: file.sha256,
      key,
    });
    const item = this.newItem({
      id,
      key,
      filename,
      facts,
      permission,
      ownerId,
      now,
      originalName: file.originalName,
    });

    // The PutObject (the long part) runs alongside the table work: the dedupe look-up, then the record
    // and hash claim in one transaction. A private record is visible only to its owner (nobody else knows
    // its id or key yet), so it may exist a moment before its bytes; a failed PutObject takes it back out.
    // A public record shows in the gallery at once, so it is written only after its bytes are stored.
    const stored = this.storage.put(key, bytes, facts.mimeType, facts.sha256).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    if (permission === 'public') {
      const failed = await stored;
      if (failed) throw failed.error;
    }
    let outcome: CreateOutcome;
    try {
      const [existing, reservation] = await Promise.all([
        this.files.findByHash(ownerId, facts.sha256),
        this.quota.prepareReservation(owner, facts.size),
      ]);
      if (existing) {
        outcome = { created: false, item: existing };
      } else {
        reservation.check();
        outcome = await this.files.createDeduped(item, { reservation });
      }
    } catch (error) {
      await stored;
      await this.deleteQuietly(key);
      throw error;
    }
    const failed = await stored;
    if (!outcome.created) {
      await this.deleteQuietly(key);
      return this.files.record(outcome.item);
    }
    if (failed) {
      await this.files.removeUnstored(outcome.item);
      throw failed.error;
    }
    return this.files.record(outcome.item);
  }

  /**
   * POST /api/v1/upload/presign. Records a pending upload (owner, key, declared type and size; expires in
   * 15 minutes) and signs a PUT of exactly that type and size to `incoming/<key>`.
   */
  async presign(ownerId: string, input: PresignInput): Promise<PresignResult> {
    const { allowedTypes, presignMaxBytes } = this.limits;
    const kind = kindFromMimeType(input.mime_type);
    if (kind === undefined || !normalizeAllowed(allowedTypes).includes(kind)) {
      throw notAllowedError(input.mime_type, allowedTypes);
    }
    if (input.size > presignMaxBytes) throw fileTooLarge(presignMaxBytes);
    const permission = parsePermission(input.permission);
    const { mimeType, ext } = KIND_INFO[kind];
    const now = this.table.clock();
    const expiresAt = new Date(now.getTime() + PRESIGN_TTL_SECONDS * 1000);
    const id = randomUUID();
    const key = storageKey(now, storedFilename(id, newFilenameSuffix(), ext));
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
      created_at: isoWithOffset(now),
      expires_at: epochSeconds(expiresAt),
    };
    await this.table.putNew(pending);
    const url = await this.storage.presignPut(incomingKey(key), {
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

  /**
   * POST /api/v1/upload/confirm. Idempotent: a key already confirmed answers its record again. Otherwise
   * the pending upload must be the caller's and unexpired; the object is read back, size and sniffed type
   * re-checked (the local stand-in enforces neither), hash and dimensions computed, the bytes copied to
   * the record key and the record written together with the pending item's confirmation and the
   * reservation of its bytes in the owner's usage. A confirm that fails on the bytes deletes the object
   * and the pending upload; one over the quota (507) leaves both (the object goes with the bucket's
   * lifecycle rule, or is confirmed once room is made, while the grant lasts).
   */
  async confirm(owner: QuotaAccount, key: string): Promise<UploadRecord> {
    const ownerId = owner.id;
    const parsed = parseStorageKey(key);
    if (!parsed) throw notFound();
    const settled = await this.confirmedRecord(ownerId, key, parsed.id, false);
    if (settled) {
      // The incoming object outlives its confirmation only if deleting it failed then: it goes now.
      await this.deleteQuietly(incomingKey(key));
      return settled;
    }

    const pending = await this.readPending(key);
    if (!pending || pending.owner_id !== ownerId || pending.id !== parsed.id) throw notFound();
    if (isExpired(pending, this.table.clock())) {
      await this.abandon(pending);
      throw errors.gone('key: the presigned upload expired; ask for a new one');
    }

    let inspected: InspectedIncoming;
    try {
      inspected = await this.inspectIncoming(pending);
    } catch (error) {
      // A concurrent confirm of the same key may have finished and removed the incoming object.
      const resolved = await this.confirmedRecord(ownerId, key, parsed.id, true);
      if (resolved) return resolved;
      if (error instanceof NotUploadedError) {
        throw errors.badRequest('key: nothing was uploaded yet; PUT the file to the presigned url first');
      }
      // Bytes that can never be accepted: the presign is spent (its object and pending item go).
      if (error instanceof UploadError) await this.abandon(pending);
      throw error;
    }
    const { facts } = inspected.upload;

    const [existing, reservation] = await Promise.all([
      this.files.findByHash(ownerId, facts.sha256),
      this.quota.prepareReservation(owner, facts.size),
    ]);
    if (existing) return this.settleOnto(pending, existing);
    // Refused before the copy: nothing to undo.
    reservation.check();

    const now = this.table.clock();
    const item = this.newItem({
      id: pending.id,
      key,
      filename: parsed.filename,
      facts,
      permission: pending.permission,
      ownerId,
      now,
      originalName: pending.original_name,
    });
    let copied = false;
    try {
      try {
        await this.storeInspected(key, inspected);
        copied = true;
      } catch (error) {
        if (!(error instanceof ObjectChangedError)) throw error;
        // Another PUT to the presigned URL replaced the bytes after they were read: nothing is recorded,
        // and the grant stays for a confirm of what is there now.
        copied = error.landed;
        throw errors.conflict('file: changed during confirm; confirm again');
      }
      const outcome = await this.files.createDeduped(item, {
        reservation,
        extra: [this.markConfirmed(pending, pending.id, now)],
      });
      if (!outcome.created) return await this.settleOnto(pending, outcome.item);
    } catch (error) {
      const resolved = await this.confirmedRecord(ownerId, key, parsed.id, true);
      if (resolved) return resolved;
      // Not recorded: the copy goes (nothing else would ever delete it); the grant and its incoming
      // object stay, so the same confirm can be retried.
      if (copied) await this.dropUnrecordedCopy(key, parsed.id, inspected);
      throw error;
    }
    await this.deleteQuietly(incomingKey(key));
    return this.files.record(item);
  }

  /**
   * DELETE /api/v1/files/{id}: the record, its hash claim and its bytes in the usage, then the object. A
   * null owner is the back office (DELETE /api/v1/admin/files/{id}): any file, same guarantees.
   */
  async deleteFile(ownerId: string | null, id: string): Promise<{ id: string; deleted: true }> {
    const item = await this.files.deleteOwn(ownerId, id);
    // The record is gone first, so a failure here leaves an unlisted object, never a record without bytes.
    await this.deleteQuietly(item.key);
    await this.invalidateQuietly(item.key);
    return { id: item.id, deleted: true };
  }

  /**
   * Takes `/i/<key>` out of the CDN's cache. The record and object are already gone, so a failure cannot
   * undo the delete: it is logged (the cached copy then lives until it expires) and the delete succeeds.
   */
  private async invalidateQuietly(key: string): Promise<void> {
    const path = `/i/${key}`;
    try {
      await this.cdn.invalidate([path]);
    } catch (error) {
      log.warn('could not invalidate a deleted file in the CDN', {
        path,
        error_name: (error as { name?: string } | undefined)?.name,
      });
    }
  }

  private newItem(input: {
    id: string;
    key: string;
    filename: string;
    facts: UploadFacts;
    permission: Permission;
    ownerId: string;
    now: Date;
    originalName: string;
  }): FileItem {
    const record = buildUploadRecord({
      id: input.id,
      facts: input.facts,
      originalName: input.originalName,
      permission: input.permission,
      baseUrl: this.limits.baseUrl,
      now: input.now,
      filename: input.filename,
      key: input.key,
    });
    return fileItemOf(record, input.ownerId, input.now);
  }

  /** The pending item as stored, expired or not: an expired one is abandoned, not merely unknown. */
  private async readPending(key: string): Promise<PendingItem | undefined> {
    return this.table.get<PendingItem>(pendingKey(key), { consistent: true, includeExpired: true });
  }

  /**
   * The record this key was confirmed into, if it was: the record under the key's own id, or (when the
   * bytes were a duplicate) the existing file the pending item points to. `cleanUp` deletes a copy made
   * under this key that no record will ever use (only a pending item still unconfirmed can be recorded).
   */
  private async confirmedRecord(
    ownerId: string,
    key: string,
    id: string,
    cleanUp: boolean,
  ): Promise<UploadRecord | undefined> {
    const [own, pending] = await this.table.getMany<Item>([fileKey(id), pendingKey(key)]);
    if (own) {
      if (own.owner_id !== ownerId || own.key !== key) throw notFound();
      return this.files.record(own as FileItem);
    }
    const target = pending?.confirmed_file_id;
    if (!pending || pending.owner_id !== ownerId || typeof target !== 'string') return undefined;
    if (cleanUp) {
      // When the pending item points at its own id, `key` holds that record's bytes: a batch read is not
      // isolated from the confirming transaction, so the record may simply not be visible yet. Only a key
      // confirmed onto another (duplicate) file is ours to delete.
      await Promise.all([
        target === id ? undefined : this.deleteQuietly(key),
        this.deleteQuietly(incomingKey(key)),
      ]);
    }
    const item = await this.files.getItem(target);
    if (!item || item.owner_id !== ownerId) throw notFound();
    return this.files.record(item);
  }

  /** Confirms the pending upload onto the owner's existing file with the same bytes, and drops ours. */
  private async settleOnto(pending: PendingItem, existing: FileItem): Promise<UploadRecord> {
    if (existing.id === pending.id) return this.files.record(existing);
    try {
      await this.table.transact([this.markConfirmed(pending, existing.id, this.table.clock())]);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const resolved = await this.confirmedRecord(pending.owner_id, pending.key, pending.id, true);
      if (resolved) return resolved;
      throw notFound();
    }
    await Promise.all([this.deleteQuietly(pending.key), this.deleteQuietly(incomingKey(pending.key))]);
    return this.files.record(existing);
  }

  private markConfirmed(pending: PendingItem, fileId: string, now: Date) {
    return {
      Update: {
        Key: pendingKey(pending.key),
        UpdateExpression: 'SET confirmed_file_id = :file, expires_at = :expires',
        ConditionExpression:
          'attribute_exists(pk) AND owner_id = :owner AND attribute_not_exists(confirmed_file_id)',
        ExpressionAttributeValues: {
          ':file': fileId,
          ':owner': pending.owner_id,
          ':expires': epochSeconds(now) + CONFIRMED_MARKER_TTL_SECONDS,
        },
      },
    };
  }

  /**
   * Puts exactly the inspected bytes under the record key: a server-side copy of `incoming/<key>`
   * conditional on the ETag that was read when nothing was removed; else the stripped bytes, from memory or
   * streamed from a second read of that version (ObjectChangedError when the object was replaced since).
   */
  private async storeInspected(key: string, inspected: InspectedIncoming): Promise<void> {
    const { upload, etag } = inspected;
    const { facts } = upload;
    if (upload.bytes) {
      await this.storage.put(key, upload.bytes, facts.mimeType, facts.sha256);
      return;
    }
    // Without an ETag to copy on (S3 always sends one), the bytes read are streamed as they are, verified.
    const plan = upload.plan ?? (etag === undefined ? wholePlan(upload.input.size) : undefined);
    if (plan) {
      const source = await this.storage.open(incomingKey(key), etag);
      if (!source) throw new ObjectChangedError(false);
      const replayed = replayPlan(source.body, plan, upload.input);
      try {
        await this.storage.putStream(key, replayed, facts.size, facts.mimeType, facts.sha256);
      } catch (error) {
        source.body.destroy();
        // The second read was not the version inspected: the PUT was aborted before its last bytes. S3
        // stores nothing then; a stand-in may keep what arrived, so the caller deletes the key either way.
        if (replayed.errored instanceof ObjectChangedError || error instanceof ObjectChangedError) {
          throw new ObjectChangedError(true);
        }
        throw error;
      }
      return;
    }
    await this.storage.copyIfMatch(incomingKey(key), key, facts.mimeType, etag!);
  }

  /**
   * Deletes the copy a failed confirm made under the record key. Should a concurrent confirm of the same
   * key have recorded the same bytes in between, they are stored again (from memory, or copied from
   * `incoming/` while it is still the version read).
   */
  private async dropUnrecordedCopy(key: string, id: string, inspected: InspectedIncoming): Promise<void> {
    await this.deleteQuietly(key);
    try {
      const recorded = await this.files.getItem(id);
      if (recorded?.key !== key) return;
      if (recorded.hash === inspected.upload.facts.sha256) await this.storeInspected(key, inspected);
      else log.warn('a concurrent confirm recorded other bytes under this key', { key });
    } catch (error) {
      log.warn('could not re-check a confirm after deleting its copy', { key, error });
    }
  }

  /** A failed or expired presign: its object and its pending item go (never a confirmed one's). */
  private async abandon(pending: PendingItem): Promise<void> {
    await this.deleteQuietly(incomingKey(pending.key));
    try {
      await this.table.delete(pendingKey(pending.key), {
        ConditionExpression: 'attribute_not_exists(confirmed_file_id)',
      });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  /**
   * Reads `incoming/<key>` once as a stream (never whole, lib/files/incoming.ts), checks it as uploaded
   * (413 over the presign limit, 400 not the declared size or empty, 415 not an allowed type or not the
   * declared one, or a container the stripper refuses): what confirm stores, with its facts, and the ETag of
   * the version read. Throws UploadError or NotUploadedError.
   */
  private async inspectIncoming(pending: PendingItem): Promise<InspectedIncoming> {
    const object = await this.storage.open(incomingKey(pending.key));
    if (!object) throw new NotUploadedError();
    const upload = await inspectStream(
      object,
      { size: pending.size, mimeType: pending.mime_type, key: pending.key },
      {
        allowedTypes: this.limits.allowedTypes,
        limit: this.limits.presignMaxBytes,
        stripMetadata: this.limits.stripMetadata,
      },
      async () => {
        try {
          return await this.storage.open(incomingKey(pending.key), object.etag);
        } catch (error) {
          if (error instanceof ObjectChangedError) return undefined;
          throw error;
        }
      },
    );
    return { upload, etag: object.etag };
  }

  private async deleteQuietly(key: string): Promise<void> {
    try {
      await this.storage.delete(key);
    } catch (error) {
      log.warn('could not delete a stored object', { key, error });
    }
  }
}

/** The whole object as it is, as a plan to replay. */
function wholePlan(size: number): StripPlan {
  const plan = new StripPlan();
  plan.keep(0, size);
  return plan;
}

function notFound() {
  return errors.notFound('key: no upload with this key (unknown, or not yours)');
}
