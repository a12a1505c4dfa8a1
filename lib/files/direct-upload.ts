// POST /api/v1/upload: the multipart upload, stored under a fresh key and recorded with the per-owner
// dedupe (FileRepository.createDeduped) and the reservation of its bytes in the owner's usage.
import { randomUUID } from 'node:crypto';
import type { Clock } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { expiryOrDefault, parseExpiry } from './expiry.ts';
import { parseTags } from './file-index.ts';
import { type CreateOutcome, type FileRepository, newFileItem } from './files.ts';
import { type ParsedUploadForm, parseUploadForm } from './multipart.ts';
import { expiryMark, newFilenameSuffix, storageKey, storedFilename } from './names.ts';
import type { QuotaAccount, QuotaService } from './quota-service.ts';
import { checkAndSniff, parsePermission, type UploadRecord } from './record.ts';
import { storedUpload } from './stored-bytes.ts';

export interface DirectUploadInput {
  body: Buffer;
  contentType: string;
  contentLength?: number | undefined;
  /** The file part's name (default `file`; the compat routes name theirs, docs/COMPAT.md). */
  fileField?: string;
}

export interface DirectUploadDeps {
  files: FileRepository;
  storage: FileStorage;
  quota: QuotaService;
  clock: Clock;
  /** `upload.max_bytes`. */
  maxBytes: number;
  allowedTypes: readonly string[];
  /** `upload.strip_metadata`. */
  stripMetadata: boolean;
  /** `base_url`. */
  baseUrl: string;
  /** Checks the album an upload names is the caller's (docs/DESIGN.md 16). */
  albums: AlbumCheck;
  /** Refuses (451) bytes like an image the operator took down (docs/MODERATION.md "The block list"). */
  likeness: LikenessCheck;
}

/** The block list's check of new bytes: the 451 for a likeness of a taken-down image. */
export interface LikenessCheck {
  /** The bytes' likeness, computed here (no call); undefined when they have none worth comparing. */
  of(bytes: Buffer): Promise<string | undefined>;
  /** Throws the 451 when the likeness is on the block list: one step of reads sent together. */
  refuse(likeness: string | undefined): Promise<void>;
}

/** The album an upload or presign names, checked as the caller's (404 otherwise); null for none. */
export interface AlbumCheck {
  requireOwn(ownerId: string, id: string | null | undefined): Promise<string | null>;
}

export class DirectUploadService {
  constructor(private readonly deps: DirectUploadDeps) {}

  /**
   * Parse (streamed, bounded, hashed on the fly), sniff, measure; the owner's existing file with these
   * bytes if there is one (free: no quota is spent); else the record, the hash claim and the reservation
   * of its bytes in the owner's usage in one transaction while one PutObject stores the bytes under a
   * fresh unique key. Whoever does not create the record (a duplicate, the loser of a race, an upload over
   * the quota: 507) deletes its own object after its PutObject has finished.
   */
  async upload(owner: QuotaAccount, input: DirectUploadInput): Promise<UploadRecord> {
    return this.store(owner, await this.parse(input));
  }

  /** The form read and bounded (413 past `upload.max_bytes`), before anyone is charged for it. */
  parse(input: DirectUploadInput): Promise<ParsedUploadForm> {
    return parseUploadForm({
      body: input.body,
      contentType: input.contentType,
      maxBytes: this.deps.maxBytes,
      ...(input.contentLength !== undefined ? { contentLength: input.contentLength } : {}),
      ...(input.fileField !== undefined ? { fileField: input.fileField } : {}),
    });
  }

  /**
   * A parsed form's file stored and recorded for its owner (what `upload` does after `parse`). `imported`:
   * no default retention from the owner's plan (an import keeps files as their source had them).
   */
  async store(owner: QuotaAccount, form: ParsedUploadForm, { imported = false } = {}): Promise<UploadRecord> {
    const { files, storage, quota, maxBytes, allowedTypes } = this.deps;
    const file = form.file;
    const permission = parsePermission(form.fields.permission);
    // Comma-separated, as a form field of PicGo or ShareX sends it.
    const tags = parseTags(form.fields.tags?.split(',') ?? []);
    const albumId = await this.deps.albums.requireOwn(owner.id, form.fields.album_id?.trim());
    // The limit applies to what was sent (stripping may add a few bytes); everything else to what is stored.
    const now = this.deps.clock();
    const asked = parseExpiry(form.fields, now);
    const sniffed = await checkAndSniff(file.bytes, { allowed: allowedTypes, maxBytes });

    const id = randomUUID();
    // The key carries the expiry the upload asked for (the edge refuses it past that, docs/UPLOADS.md); a
    // plan's default is known only with the usage read beside the PutObject, so its key carries none and the
    // sweep takes its bytes within minutes of the end (reading it first would add a wait to every upload).
    const filename = storedFilename(id, newFilenameSuffix(owner.id) + expiryMark(asked), sniffed.ext);
    const key = storageKey(now, filename);
    const { bytes, facts } = storedUpload(file.bytes, sniffed, {
      strip: this.deps.stripMetadata,
      inputSha256: file.sha256,
      key,
    });

    // Its likeness is computed before any call, so its look-up goes out with the step of reads below.
    const likeness = await this.deps.likeness.of(bytes);
    // The PutObject (the long part) runs alongside the table work: the dedupe look-up, then the record
    // and hash claim in one transaction. A private record is visible only to its owner (nobody else knows
    // its id or key yet), so it may exist a moment before its bytes; a failed PutObject takes it back out.
    // A public record shows in the gallery at once, so it is written only after its bytes are stored.
    const stored = storage.put(key, bytes, facts.mimeType, facts.sha256).then(
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
        files.findByHash(owner.id, facts.sha256),
        quota.prepareReservation(owner, facts.size, id),
        this.deps.likeness.refuse(likeness),
      ]);
      if (existing) {
        outcome = { created: false, item: existing };
      } else {
        reservation.check();
        // No expiry asked for: the plan's default retention, from the usage the reservation read (no read or
        // wait of its own; the bytes are being stored meanwhile).
        const expiresAt = expiryOrDefault(asked, now, imported ? undefined : reservation.retentionDays);
        const item = newFileItem({
          id,
          key,
          filename,
          facts,
          permission,
          albumId,
          tags,
          expiresAt,
          ownerId: owner.id,
          ownerRole: owner.role,
          now,
          originalName: file.originalName,
          baseUrl: this.deps.baseUrl,
          listingShards: this.deps.files.listingShards,
        });
        outcome = await files.createDeduped(item, { reservation });
      }
    } catch (error) {
      await stored;
      await storage.deleteQuietly(key);
      throw error;
    }
    const failed = await stored;
    if (!outcome.created) {
      await storage.deleteQuietly(key);
      return files.record(outcome.item);
    }
    if (failed) {
      await files.removeUnstored(outcome.item);
      throw failed.error;
    }
    return files.record(outcome.item);
  }
}
