// POST /api/v1/upload/confirm: a presigned upload read back, checked, stripped and stored under its record
// key as exactly the bytes inspected, then recorded with the per-owner dedupe and the owner's usage.
import { errors } from '#lib/core/errors.ts';
import { isExpired } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { DirectUploadDeps } from './direct-upload.ts';
import { UploadError } from './errors.ts';
import { type FileItem, newFileItem } from './files.ts';
import { parseStorageKey } from './names.ts';
import type { PendingItem, PendingUploads } from './pending.ts';
import type { QuotaAccount } from './quota-service.ts';
import { type InspectedIncoming, NotUploadedError, readIncoming } from './read-incoming.ts';
import type { UploadRecord } from './record.ts';
import { incomingKey, ObjectChangedError } from './storage.ts';

/** What a direct upload uses, but the presign limit in force in place of `upload.max_bytes`. */
export interface ConfirmDeps extends Omit<DirectUploadDeps, 'maxBytes'> {
  pending: PendingUploads;
  /** `upload.presign_max_bytes`, never above CONFIRM_MAX_BYTES. */
  presignMaxBytes: number;
}

export class ConfirmService {
  constructor(private readonly deps: ConfirmDeps) {}

  /**
   * Idempotent: a key already confirmed answers its record again. Otherwise the pending upload must be the
   * caller's and unexpired; the object is read back, size and sniffed type re-checked (the local stand-in
   * enforces neither), hash and dimensions computed, the bytes stored under the record key and the record
   * written together with the pending item's confirmation and the reservation of its bytes in the owner's
   * usage. A confirm that fails on the bytes deletes the object and the pending upload; one over the quota
   * (507) leaves both (the object goes with the bucket's lifecycle rule, or is confirmed once room is made,
   * while the grant lasts).
   */
  async confirm(owner: QuotaAccount, key: string): Promise<UploadRecord> {
    const { files, storage } = this.deps;
    const ownerId = owner.id;
    const parsed = parseStorageKey(key);
    if (!parsed) throw notFound();
    const settled = await this.confirmedRecord(ownerId, key, parsed.id, false);
    if (settled) {
      // The incoming object outlives its confirmation only if deleting it failed then: it goes now.
      await storage.deleteQuietly(incomingKey(key));
      return settled;
    }

    const pending = await this.deps.pending.read(key);
    if (!pending || pending.owner_id !== ownerId || pending.id !== parsed.id) throw notFound();
    if (isExpired(pending, this.deps.clock())) {
      await this.abandon(pending);
      throw errors.gone('key: the presigned upload expired; ask for a new one');
    }

    let inspected: InspectedIncoming;
    try {
      inspected = await readIncoming(
        storage,
        { objectKey: incomingKey(key), key, size: pending.size, mimeType: pending.mime_type },
        {
          allowedTypes: this.deps.allowedTypes,
          limit: this.deps.presignMaxBytes,
          stripMetadata: this.deps.stripMetadata,
        },
      );
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
      files.findByHash(ownerId, facts.sha256),
      this.deps.quota.prepareReservation(owner, facts.size, pending.id),
    ]);
    if (existing) return this.settleOnto(pending, existing);
    // Refused before the copy: nothing to undo.
    reservation.check();

    const now = this.deps.clock();
    const item = newFileItem({
      id: pending.id,
      key,
      filename: parsed.filename,
      facts,
      permission: pending.permission,
      ownerId,
      now,
      originalName: pending.original_name,
      baseUrl: this.deps.baseUrl,
      listingShards: this.deps.files.listingShards,
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
      const outcome = await files.createDeduped(item, {
        reservation,
        extra: [this.deps.pending.markConfirmed(pending, pending.id, now)],
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
    await storage.deleteQuietly(incomingKey(key));
    return files.record(item);
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
    const { files, storage } = this.deps;
    const [own, pending] = await this.deps.pending.recordAndPending(key, id);
    if (own) {
      if (own.owner_id !== ownerId || own.key !== key) throw notFound();
      return files.record(own);
    }
    const target = pending?.confirmed_file_id;
    if (!pending || pending.owner_id !== ownerId || typeof target !== 'string') return undefined;
    if (cleanUp) {
      // When the pending item points at its own id, `key` holds that record's bytes: a batch read is not
      // isolated from the confirming transaction, so the record may simply not be visible yet. Only a key
      // confirmed onto another (duplicate) file is ours to delete.
      await Promise.all([
        target === id ? undefined : storage.deleteQuietly(key),
        storage.deleteQuietly(incomingKey(key)),
      ]);
    }
    const item = await files.getItem(target);
    if (!item || item.owner_id !== ownerId) throw notFound();
    return files.record(item);
  }

  /** Confirms the pending upload onto the owner's existing file with the same bytes, and drops ours. */
  private async settleOnto(pending: PendingItem, existing: FileItem): Promise<UploadRecord> {
    const { files, storage } = this.deps;
    if (existing.id === pending.id) return files.record(existing);
    if (!(await this.deps.pending.confirmOnto(pending, existing.id, this.deps.clock()))) {
      const resolved = await this.confirmedRecord(pending.owner_id, pending.key, pending.id, true);
      if (resolved) return resolved;
      throw notFound();
    }
    await Promise.all([storage.deleteQuietly(pending.key), storage.deleteQuietly(incomingKey(pending.key))]);
    return files.record(existing);
  }

  /**
   * Puts exactly the inspected bytes under the record key: the stripped bytes from memory, else a
   * server-side copy of `incoming/<key>` conditional on the ETag read (ObjectChangedError when the object
   * was replaced since). Without an ETag to copy on (S3 always sends one) the bytes read are written.
   */
  private async storeInspected(key: string, inspected: InspectedIncoming): Promise<void> {
    const { upload, etag } = inspected;
    const { facts } = upload;
    if (upload.rewritten || etag === undefined) {
      await this.deps.storage.put(key, upload.bytes, facts.mimeType, facts.sha256);
      return;
    }
    await this.deps.storage.copyIfMatch(incomingKey(key), key, facts.mimeType, etag);
  }

  /**
   * Deletes the copy a failed confirm made under the record key. Should a concurrent confirm of the same
   * key have recorded the same bytes in between, they are stored again (from memory, or copied from
   * `incoming/` while it is still the version read).
   */
  private async dropUnrecordedCopy(key: string, id: string, inspected: InspectedIncoming): Promise<void> {
    await this.deps.storage.deleteQuietly(key);
    try {
      const recorded = await this.deps.files.getItem(id);
      if (recorded?.key !== key) return;
      if (recorded.hash === inspected.upload.facts.sha256) await this.storeInspected(key, inspected);
      else log.warn('a concurrent confirm recorded other bytes under this key', { key });
    } catch (error) {
      log.warn('could not re-check a confirm after deleting its copy', { key, error });
    }
  }

  /** A failed or expired presign: its object and its pending item go (never a confirmed one's). */
  private async abandon(pending: PendingItem): Promise<void> {
    await this.deps.storage.deleteQuietly(incomingKey(pending.key));
    await this.deps.pending.removeUnconfirmed(pending.key);
  }
}

function notFound() {
  return errors.notFound('key: no upload with this key (unknown, or not yours)');
}
