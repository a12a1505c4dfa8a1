// Builds the upload services from what they use (table, storage, limits, quotas), and the owner of the
// static upload token; production (functions/upload/deps.ts) and tests call the same builder.

import { ApiTokenService } from '#lib/accounts/api-tokens.ts';
import type { Principal } from '#lib/accounts/model.ts';
import { AccountRepository } from '#lib/accounts/repository.ts';
import { errors } from '#lib/core/errors.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import type { UPLOAD_TYPES } from '#lib/platform/config/schema.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { AdminFiles } from './admin-files.ts';
import { FileRepository } from './files.ts';
import { MULTIPART_OVERHEAD_BYTES } from './multipart.ts';
import type { QuotaService } from './quota-service.ts';
import type { FileStorage } from './storage.ts';
import { UploadService } from './uploads.ts';

export interface UploadLimits {
  /** `upload.max_bytes`: direct uploads. */
  maxBytes: number;
  /** `upload.presign_max_bytes`. */
  presignMaxBytes: number;
  allowedTypes: readonly (typeof UPLOAD_TYPES)[number][];
  /** `upload.strip_metadata`: images are stored without EXIF, GPS, XMP, IPTC and comments. */
  stripMetadata: boolean;
}

export interface UploadServicesInput {
  table: Table;
  storage: FileStorage;
  /** `base_url`: file URLs are `{base_url}/i/<key>`. */
  baseUrl: string;
  limits: UploadLimits;
  /** Usage and quotas (lib/files): uploads reserve their bytes, deletions give them back. */
  quota: QuotaService;
  /** The CDN in front of /i/* (lib/wiring/cdn.ts): a deleted file is invalidated there. None: no CDN. */
  cdn?: Invalidator;
}

export interface UploadServices {
  table: Table;
  storage: FileStorage;
  files: FileRepository;
  /** The back office's view of everyone's files. */
  adminFiles: AdminFiles;
  uploads: UploadService;
  quota: QuotaService;
  tokens: ApiTokenService;
  /** Who uploads made with the static `upload.api_token` belong to: the first administrator. */
  staticTokenOwner: () => Promise<Principal>;
}

/** How long the owner of the static token (the first administrator) is remembered once found. */
const STATIC_OWNER_CACHE_MS = 60_000;

export function buildUploadServices(input: UploadServicesInput): UploadServices {
  const { table, storage, baseUrl, limits, quota } = input;
  const files = new FileRepository(table, baseUrl);
  const accounts = new AccountRepository(table);
  let owner: { principal: Principal; until: number } | undefined;
  return {
    table,
    storage,
    files,
    adminFiles: new AdminFiles(table, files),
    quota,
    uploads: new UploadService(
      table,
      files,
      storage,
      {
        maxBytes: limits.maxBytes,
        presignMaxBytes: limits.presignMaxBytes,
        allowedTypes: [...limits.allowedTypes],
        baseUrl,
        stripMetadata: limits.stripMetadata,
      },
      quota,
      input.cdn,
    ),
    tokens: new ApiTokenService(table),
    // Before an administrator exists the token is right but has no owner: 503 with a message saying so
    // (the operator's fix, not the client's).
    staticTokenOwner: async () => {
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
      };
      owner = { principal, until: Date.now() + STATIC_OWNER_CACHE_MS };
      return principal;
    },
  };
}

/** The largest direct-upload request body: the file limit plus the multipart allowance. */
export function directUploadBodyLimit(maxBytes: number): number {
  return maxBytes + MULTIPART_OVERHEAD_BYTES;
}
