// This container's upload services, built once from configuration, and the uploader credentials (API
// tokens, the static upload.api_token) plugged into the shared authenticator.
import { AccountRepository } from '../accounts/repository.ts';
import { useUploaderCredentials } from '../auth/authenticate.ts';
import { config } from '../config/index.ts';
import { serviceTable } from '../db/index.ts';
import type { Table } from '../db/repository.ts';
import { errors } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import { ApiTokenService } from './api-tokens.ts';
import { fileStorage } from './file-storage.ts';
import { FileRepository } from './files.ts';
import { MULTIPART_OVERHEAD_BYTES } from './multipart.ts';
import type { FileStorage } from './storage.ts';
import { UploadService } from './uploads.ts';

export interface UploadServices {
  table: Table;
  storage: FileStorage;
  files: FileRepository;
  uploads: UploadService;
  tokens: ApiTokenService;
  staticTokenPrincipal: () => Promise<Principal>;
}

/** How long the owner of the static token (the first administrator) is remembered once found. */
const STATIC_OWNER_CACHE_MS = 60_000;

/** Builds the services over any table and storage (tests pass their own clock or client). */
export function buildUploadServices(table: Table, storage: FileStorage): UploadServices {
  const files = new FileRepository(table, config.base_url);
  const accounts = new AccountRepository(table);
  let owner: { principal: Principal; until: number } | undefined;
  return {
    table,
    storage,
    files,
    uploads: new UploadService(table, files, storage, {
      maxBytes: config.upload.max_bytes,
      presignMaxBytes: config.upload.presign_max_bytes,
      allowedTypes: config.upload.allowed_types,
      baseUrl: config.base_url,
    }),
    tokens: new ApiTokenService(table),
    // Uploads made with the static token belong to the first administrator. Before one exists the token
    // is right but has no owner: 503 with a message saying so (the operator's fix, not the client's).
    staticTokenPrincipal: async () => {
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

let services: UploadServices | undefined;

export function uploadServices(): UploadServices {
  services ??= buildUploadServices(serviceTable(), fileStorage());
  return services;
}

/** Lets the shared authenticator accept API tokens and the static token on `uploader` routes. */
export function registerUploaderCredentials(): void {
  useUploaderCredentials({
    verifyApiToken: (token) => uploadServices().tokens.verify(token),
    staticTokenPrincipal: () => uploadServices().staticTokenPrincipal(),
  });
}

/** The largest direct-upload request body: the file limit plus the multipart allowance. */
export function directUploadBodyLimit(): number {
  return config.upload.max_bytes + MULTIPART_OVERHEAD_BYTES;
}
