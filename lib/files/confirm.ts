// POST /api/v1/upload/confirm: a presigned upload read back, checked, stripped and stored under its record
// key as exactly the bytes inspected, then recorded with the per-owner dedupe and the owner's usage.
import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, isExpired } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { ObjectChangedError } from '#lib/platform/storage/s3.ts';
import type { DirectUploadDeps } from './direct-upload.ts';
import { UploadError } from './errors.ts';
import { type CreateOutcome, type FileItem, newFileItem } from './files.ts';
import { parseStorageKey } from './names.ts';
import type { PendingItem, PendingUploads } from './pending.ts';
import { incomingKey } from './prefixes.ts';
import type { QuotaAccount, Reservation } from './quota-service.ts';
import { type InspectedIncoming, NotUploadedError, readIncoming } from './read-incoming.ts';
import type { UploadRecord } from './record.ts';

/** What a direct upload uses, but the presign limit in force in place of `upload.max_bytes`. */
export interface ConfirmDeps extends Omit<DirectUploadDeps, 'maxBytes' | 'albums'> {
  pending: PendingUploads;
  /** `upload.presign_max_bytes`, never above CONFIRM_MAX_BYTES. */
  presignMaxBytes: number;
}

/** Looks for a concurrent confirm's record after a refusal (about 100 ms in all, on that path only). */
const RECORDED_MEANWHILE_LOOKS = 5;

export class ConfirmService {
  constructor(private readonly deps: ConfirmDeps) {}

  /**
   * Idempotent: a key already confirmed answers its record again. Otherwise the pending upload must be the
   * caller's and unexpired; the object is read back, size and sniffed type re-checked (the local stand-in
   * enforces neither), hash and dimensions computed; then the bytes are stored under the record key while
   * the record is written together with its hash claim, the pending item's confirmation and the
   * reservation of its bytes in the owner's usage. A confirm that fails on the bytes deletes the object and
   * the pending upload; one over the quota (507) leaves both (the object goes with the bucket's lifecycle
   * rule, or is confirmed once room is made, while the grant lasts).
   *
   * Four waits on AWS after the caller's authentication: the record, the pending upload and the owner's
   * usage read together; the object; the store and the record's transaction together (a public file's
   * record after its bytes, as a direct upload's: the gallery shows it at once). The incoming object is
   * left to the bucket's lifecycle rule for `incoming/`: once the grant is confirmed nothing reads it again
   * (a repeated confirm answers the record, and `/i/` never serves `incoming/`); an original whose metadata
   * was stripped is deleted at once, so its GPS position is not kept for that day.
   */
  async confirm(owner: QuotaAccount, key: string): Promise<UploadRecord> {
    const { files, storage } = this.deps;
    const ownerId = owner.id;
    const parsed = parseStorageKey(key);
    if (!parsed) throw notFound();
    // The usage is read before the size is known, beside the look-up, rather than one wait later: the
    // reservation's condition holds it to the usage as it is when the record is written.
    const [[own, pending], usage] = await Promise.all([
      this.deps.pending.recordAndPending(key, parsed.id),
      this.deps.quota.stateFor(owner),
    ]);
    const settled = await this.settledRecord(ownerId, key, parsed.id, own, pending, false);
    if (settled) return settled;
    if (!pending || pending.owner_id !== ownerId || pending.id !== parsed.id) throw notFound();
    if (isExpired(pending, this.deps.clock())) {
      await this.abandon(owner, pending);
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
      // A concurrent confirm of the same key may have finished (its record is the answer).
      const resolved = await this.confirmedRecord(ownerId, key, parsed.id, true);
      if (resolved) return resolved;
      if (error instanceof NotUploadedError) {
        throw errors.badRequest('key: nothing was uploaded yet; PUT the file to the presigned url first');
      }
      // Bytes that can never be accepted: the presign is spent (its object and pending item go).
      if (error instanceof UploadError) await this.abandon(owner, pending);
      throw error;
    }
    const { facts } = inspected.upload;
    // A likeness of a taken-down image (docs/MODERATION.md): 451, and the presign is spent.
    const likeness = await this.deps.likeness.of(inspected.upload.bytes);
    await this.deps.likeness.refuse(likeness).catch(async (error: unknown) => {
      await this.abandon(owner, pending);
      throw error;
    });

    const reservation = this.deps.quota.reservationOn(owner, usage, facts.size, pending.id);
    if (!reservation.fits()) {
      // Over the quota as read: a duplicate still costs nothing, and the usage may have moved since it was
      // read (a delete), so both are asked before the 507. Refused here, nothing was stored: nothing to undo.
      const [existing, refused] = await Promise.all([
        files.findByHash(ownerId, facts.sha256),
        reservation.refresh().then(
          () => undefined,
          (error: unknown) => ({ error }),
        ),
      ]);
      if (existing) return this.released(owner, pending, await this.settleOnto(pending, existing));
      if (refused) throw refused.error;
    }

    const now = this.deps.clock();
    const item = newFileItem({
      id: pending.id,
      key,
      filename: parsed.filename,
      facts,
      permission: pending.permission,
      albumId: pending.album_id ?? null,
      tags: pending.tags,
      expiresAt: pending.file_expires_at,
      ownerId,
      ownerRole: owner.role,
      now,
      originalName: pending.original_name,
      baseUrl: this.deps.baseUrl,
      listingShards: this.deps.files.listingShards,
    });
    // The hold is given back beside the store and the record (no wait of its own): the record's transaction
    // holds the upload to the quota by itself, and a hold not given back (a conflict) lapses with the presign.
    const [record] = await Promise.all([
      this.storeAndRecord(pending, item, inspected, reservation, now),
      this.deps.quota.releasePresigned(owner, pending.id, pending.size),
    ]);
    return record;
  }

  /** `record`, once the presign's hold on the quota is given back (its bytes are now counted, or were). */
  private async released(
    owner: QuotaAccount,
    pending: PendingItem,
    record: UploadRecord,
  ): Promise<UploadRecord> {
    await this.deps.quota.releasePresigned(owner, pending.id, pending.size);
    return record;
  }

  /**
   * Stores the inspected bytes under the record key while the record's transaction runs (after the bytes,
   * for a public file), then settles what happened. The dedupe look-up is the transaction's own condition
   * on the hash claim: a duplicate cancels it and settles onto the existing file. Whoever does not keep its
   * copy (a duplicate, a failed transaction) deletes it after the store has finished; a record whose bytes
   * could not be stored is taken back out with its claim, its usage and the confirmation, so the grant
   * stays open for a confirm of what is there now.
   */
  private async storeAndRecord(
    pending: PendingItem,
    item: FileItem,
    inspected: InspectedIncoming,
    reservation: Reservation,
    now: Date,
  ): Promise<UploadRecord> {
    const { files } = this.deps;
    const { key, id, owner_id: ownerId } = pending;
    const stored = this.storeInspected(key, inspected).then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    let outcome: CreateOutcome;
    try {
      if (pending.permission === 'public') {
        const failed = await stored;
        if (failed) throw failed.error;
      }
      outcome = await files.createDeduped(item, {
        reservation,
        extra: [this.deps.pending.markConfirmed(pending, id, now)],
      });
    } catch (error) {
      const failed = await stored;
      // A concurrent confirm of the same key may have recorded it: its record is the answer.
      const resolved = await this.recordedMeanwhile(ownerId, key, id, error);
      if (resolved) return resolved;
      // Not recorded: a copy made goes (nothing else would ever delete it); the grant and its incoming
      // object stay, so the same confirm can be retried.
      if (madeCopy(failed)) await this.dropUnrecordedCopy(key, id, inspected);
      throw failed ? storeFailure(failed.error) : error;
    }
    const failed = await stored;
    // A duplicate: the owner's existing file is the answer, and the copy goes (settleOnto).
    if (!outcome.created) return this.settleOnto(pending, outcome.item);
    if (failed) {
      // Recorded while the bytes could not be stored (a private record is seen only by its owner
      // meanwhile): the record, its claim, its bytes in the usage and the confirmation go back together.
      await files.removeUnstored(outcome.item, [this.deps.pending.reopen(pending, id)]);
      if (madeCopy(failed)) await this.dropUnrecordedCopy(key, id, inspected);
      throw storeFailure(failed.error);
    }
    // Stripping removed metadata (GPS among it) from what is stored: the original that still carries it
    // does not wait a day for the lifecycle rule. One more wait, on such uploads only.
    if (inspected.upload.rewritten) await this.deps.storage.deleteQuietly(incomingKey(key));
    return files.record(outcome.item);
  }

  /**
   * The record a concurrent confirm of the same key made, when ours was refused. A refusal by a transaction
   * still in flight (DynamoDB's TransactionConflict) comes before that transaction's writes are visible, so
   * a refused confirm looks again a few times, a few milliseconds apart, before it gives up.
   */
  private async recordedMeanwhile(
    ownerId: string,
    key: string,
    id: string,
    refusal: unknown,
  ): Promise<UploadRecord | undefined> {
    const looks = refusal instanceof ConditionFailedError ? RECORDED_MEANWHILE_LOOKS : 1;
    for (let look = 1; ; look += 1) {
      const resolved = await this.confirmedRecord(ownerId, key, id, true);
      if (resolved || look >= looks) return resolved;
      await new Promise((resolve) => setTimeout(resolve, 10 * look));
    }
  }

  /**
   * The record this key was confirmed into, if it was (read again now): the record under the key's own
   * id, or (when the bytes were a duplicate) the existing file the pending item points to.
   */
  private async confirmedRecord(
    ownerId: string,
    key: string,
    id: string,
    cleanUp: boolean,
  ): Promise<UploadRecord | undefined> {
    const [own, pending] = await this.deps.pending.recordAndPending(key, id);
    return this.settledRecord(ownerId, key, id, own, pending, cleanUp);
  }

  /**
   * The record of a key confirmed already, from the record under its own id and its pending item as read
   * (a confirmation marker past its expiry counts as none). `cleanUp` deletes a copy made under this key
   * that no record will ever use (only a pending item still unconfirmed can be recorded).
   */
  private async settledRecord(
    ownerId: string,
    key: string,
    id: string,
    own: FileItem | undefined,
    pending: PendingItem | undefined,
    cleanUp: boolean,
  ): Promise<UploadRecord | undefined> {
    const { files, storage } = this.deps;
    if (own) {
      if (own.owner_id !== ownerId || own.key !== key) throw notFound();
      return files.record(own);
    }
    const target = pending?.confirmed_file_id;
    if (!pending || pending.owner_id !== ownerId || typeof target !== 'string') return undefined;
    if (isExpired(pending, this.deps.clock())) return undefined;
    // When the pending item points at its own id, `key` holds that record's bytes: a batch read is not
    // isolated from the confirming transaction, so the record may simply not be visible yet. Only a key
    // confirmed onto another (duplicate) file is ours to delete.
    if (cleanUp && target !== id) await storage.deleteQuietly(key);
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
  private async abandon(owner: QuotaAccount, pending: PendingItem): Promise<void> {
    await this.deps.storage.deleteQuietly(incomingKey(pending.key));
    await this.deps.pending.removeUnconfirmed(pending.key);
    await this.deps.quota.releasePresigned(owner, pending.id, pending.size);
  }
}

/** Whether a store that ended so left an object under the record key (a copy of other bytes, or ours). */
function madeCopy(failed: { error: unknown } | undefined): boolean {
  return !failed || (failed.error instanceof ObjectChangedError && failed.error.landed);
}

/**
 * What a confirm whose store failed answers: another PUT to the presigned URL replaced the bytes after
 * they were read is a 409 (nothing is recorded; the grant stays for a confirm of what is there now).
 */
function storeFailure(error: unknown): unknown {
  return error instanceof ObjectChangedError
    ? errors.conflict('file: changed during confirm; confirm again')
    : error;
}

function notFound() {
  return errors.notFound('key: no upload with this key (unknown, or not yours)');
}
