// Builds the files domain from what it uses (table, storage, limits, quotas, CDN takedowns, the account
// records it reads): each service once, over the shared pieces; production (functions/files/deps.ts) and
// tests call the same builder.
import type { Accounts } from '#lib/accounts/build.ts';
import type { Principal } from '#lib/accounts/model.ts';
import { type RateLimit, Throttle } from '#lib/accounts/throttle.ts';
import { errors } from '#lib/core/errors.ts';
import { buildTakedowns } from '#lib/platform/cdn/build-takedowns.ts';
import type { UPLOAD_TYPES } from '#lib/platform/config/schema.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { AdminFiles } from './admin-files.ts';
import { buildOwnerRules } from './build-owner-rules.ts';
import { buildAlbums } from './build-records.ts';
import { ConfirmService } from './confirm.ts';
import { DirectUploadService, type LikenessCheck } from './direct-upload.ts';
import { FileDeletionService } from './file-deletion.ts';
import { FileSearch } from './file-search.ts';
import { FileRepository } from './files.ts';
import { MULTIPART_OVERHEAD_BYTES } from './multipart.ts';
import { PendingUploads } from './pending.ts';
import { PresignService } from './presign.ts';
import type { QuotaService } from './quota-service.ts';
import { CONFIRM_MAX_BYTES } from './read-incoming.ts';
import { Trash } from './trash.ts';

export interface UploadLimits {
  /** `upload.max_bytes`: direct uploads. */
  maxBytes: number;
  /** `upload.presign_max_bytes`; presign and confirm apply at most CONFIRM_MAX_BYTES. */
  presignMaxBytes: number;
  allowedTypes: readonly (typeof UPLOAD_TYPES)[number][];
  /** `upload.strip_metadata`: images are stored without EXIF, GPS, XMP, IPTC and comments. */
  stripMetadata: boolean;
}

export interface FilesInput {
  table: Table;
  storage: FileStorage;
  /** `base_url`: file URLs are `{base_url}/i/<key>`. */
  baseUrl: string;
  limits: UploadLimits;
  /** Usage and quotas: uploads reserve their bytes, deletions give them back. */
  quota: QuotaService;
  /** `listing_shards`: shards of the gallery, the private files and pending takedowns (lib/platform/db/shards.ts). */
  listingShards: number;
  /** `cdn.deleted_max_age_seconds`: how long the edge may still hold a deleted file (takedowns are invalidated). */
  cdn: { deletedMaxAgeSeconds: number };
  /** `files.trash_days`: how long a deleted file waits in the trash (docs/UPLOADS.md "Trash"). */
  trashDays: number;
  /** The owners' usernames (back office), the static token's owner, and the uploaders' API tokens. */
  accounts: Pick<Accounts, 'repository' | 'apiTokens'>;
  /** The static token's own quota and rate (`upload.api_token_quota_bytes`, `upload.api_token_rate`). */
  staticToken: { quotaBytes: number; rate: RateLimit };
  /** Refuses likenesses of taken-down images (lib/moderation/build.ts buildLikenessCheck). */
  likeness: LikenessCheck;
}

/** How long the owner of the static token (the first administrator) is remembered once found. */
const STATIC_OWNER_CACHE_MS = 60_000;

export function buildFiles(input: FilesInput) {
  const { table, storage, baseUrl, limits, quota } = input;
  const { clock } = table;
  const accounts = input.accounts.repository;
  const files = new FileRepository({ table, baseUrl, listingShards: input.listingShards });
  const pending = new PendingUploads({ table });
  const allowedTypes = [...limits.allowedTypes];
  // Confirm holds the object in memory: the limit never exceeds what the function can hold.
  const presignMaxBytes = Math.min(limits.presignMaxBytes, CONFIRM_MAX_BYTES);
  const { stripMetadata } = limits;
  const albums = buildAlbums(table, files, baseUrl);
  const deletions = new FileDeletionService({
    files,
    storage,
    takedowns: buildTakedowns({
      table,
      shards: input.listingShards,
      edgeMaxAgeSeconds: input.cdn.deletedMaxAgeSeconds,
    }),
  });
  return {
    files,
    /** Albums (docs/DESIGN.md 16). */
    albums,
    /** Owners' tags, tag filter and name search (docs/UPLOADS.md "Tags and search"). */
    search: new FileSearch({ table, files }),
    /** The back office's view of everyone's files. */
    adminFiles: new AdminFiles({ table, files, accounts }),
    directUploads: new DirectUploadService({
      files,
      storage,
      quota,
      clock,
      maxBytes: limits.maxBytes,
      allowedTypes,
      stripMetadata,
      baseUrl,
      albums,
      likeness: input.likeness,
    }),
    presigns: new PresignService({ pending, storage, quota, clock, presignMaxBytes, allowedTypes, albums }),
    confirms: new ConfirmService({
      files,
      pending,
      storage,
      quota,
      clock,
      presignMaxBytes,
      allowedTypes,
      stripMetadata,
      baseUrl,
      likeness: input.likeness,
    }),
    deletions,
    /** Owners' deletes land here first (docs/UPLOADS.md "Trash"). */
    trash: new Trash({ files, deletions, storage, trashDays: input.trashDays }),
    quota,
    /** The owners' rules at the edge: their Referer allow-lists (docs/IMAGES.md "Serving rules"). */
    ownerRules: buildOwnerRules({ table, shards: input.listingShards }),
    /** The uploaders' API tokens (the accounts' own, for the upload routes). */
    tokens: input.accounts.apiTokens,
    /** Who uploads made with the static `upload.api_token` belong to: the first administrator. */
    staticTokenOwner: staticTokenOwner(accounts, new Throttle({ table }), input.staticToken),
  };
}

export type Files = ReturnType<typeof buildFiles>;

/**
 * The first administrator, remembered for a minute. Before an administrator exists the token is right but
 * has no owner: 503 with a message saying so (the operator's fix, not the client's).
 */
function staticTokenOwner(
  accounts: Accounts['repository'],
  throttle: Throttle,
  limits: FilesInput['staticToken'],
): () => Promise<Principal> {
  let owner: { principal: Principal; until: number } | undefined;
  return async () => {
    // One rate for the token, whichever container answers: a conditional write per request on one of its
    // buckets (no item takes every request), 429 past it.
    await throttle.consumeSpread(
      'static-upload-token',
      limits.rate,
      'Too many uploads with the static token',
    );
    if (owner && owner.until > Date.now()) return owner.principal;
    const admin = await accounts.firstAdmin();
    if (!admin) {
      throw errors.serviceUnavailable(
        'The static upload token has no owner yet: uploads made with it belong to the first administrator, and none exists (create one, e.g. with admin.bootstrap)',
      );
    }
    const principal: Principal = {
      accountId: admin.id,
      role: admin.role,
      via: 'static_token',
      account: admin,
      quotaBytes: limits.quotaBytes,
    };
    owner = { principal, until: Date.now() + STATIC_OWNER_CACHE_MS };
    return principal;
  };
}

/** The largest direct-upload request body: the file limit plus the multipart allowance. */
export function directUploadBodyLimit(maxBytes: number): number {
  return maxBytes + MULTIPART_OVERHEAD_BYTES;
}
