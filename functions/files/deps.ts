// The files function's dependencies, built once per container from its needs and settings.

import { sealedKey } from '#lib/accounts/sealed-key.ts';
import { type DeleteLinks, deleteLinks } from '#lib/compat/delete-links.ts';
import type { BandwidthUsage } from '#lib/files/bandwidth.ts';
import { buildFiles, type Files } from '#lib/files/build.ts';
import { renditionUrlSigner } from '#lib/files/rendition-access.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import type { Authenticator } from '#lib/http/handler.ts';
import { buildAccountExports } from '#lib/lifecycle/build.ts';
import type { AccountExports } from '#lib/lifecycle/exports.ts';
import { buildBlockList, buildLikenessCheck, buildReviews } from '#lib/moderation/build.ts';
import { config } from '#lib/platform/config/index.ts';
import { adminSecondFactorRequired, webhookPrivateTargets } from '#lib/platform/config/schema.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { buildWebhooks, type Webhooks } from '#lib/webhooks/build.ts';
import { buildBandwidthUsage } from '#lib/wiring/bandwidth.ts';
import { renditionSecretsOf } from '#lib/wiring/front-door.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { quotaOf, sessionsOf } from '#lib/wiring/shared.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface FilesDeps {
  services: Files;
  /** Sessions, API tokens, and the static `upload.api_token` (docs/DESIGN.md 5). */
  authenticate: Authenticator;
  /** Bytes served this month and the cap in force (GET /api/v1/usage, docs/UPLOADS.md "Bandwidth"). */
  bandwidth: BandwidthUsage;
  /** A signed rendition URL of a stored file's key (docs/IMAGES.md "Presets and signatures"). */
  renditionUrl: (key: string, query: URLSearchParams) => Promise<string>;
  /** The files' bytes, for their owners (GET /api/v1/files/{id}/content). */
  storage: FileStorage;
  /** The owner's exports (docs/ACCOUNTS.md "Export"). */
  exports: AccountExports;
  /** The moderation queue, reviews, block list and audit log (docs/MODERATION.md). */
  moderation: ReturnType<typeof buildReviews>;
  /** Chevereto's delete links (docs/COMPAT.md). */
  compatLinks: DeleteLinks;
  /** The owner's webhook endpoints and their deliveries (docs/WEBHOOKS.md). */
  webhooks: Webhooks;
}

export function buildFilesDeps(resources: GroupResources): FilesDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const shared = sessionsOf(resources);
  const blockList = buildBlockList({ table, shards: settings.listing_shards });
  const services = buildFiles({
    table,
    storage: storageOf(resources),
    baseUrl: settings.base_url,
    limits: {
      maxBytes: settings.upload.max_bytes,
      presignMaxBytes: settings.upload.presign_max_bytes,
      allowedTypes: settings.upload.allowed_types,
      stripMetadata: settings.upload.strip_metadata,
    },
    quota: quotaOf(resources),
    listingShards: settings.listing_shards,
    // Takedowns wait in the table for the takedowns worker, the only function that invalidates.
    cdn: { deletedMaxAgeSeconds: settings.cdn.deleted_max_age_seconds },
    trashDays: settings.files.trash_days,
    accounts: shared,
    likeness: buildLikenessCheck(blockList, settings.moderation.block_distance),
    staticToken: {
      quotaBytes: settings.upload.api_token_quota_bytes,
      rate: {
        perMinute: settings.upload.api_token_rate.per_minute,
        burst: settings.upload.api_token_rate.burst,
        perDay: settings.upload.api_token_rate.per_day,
      },
    },
  });
  const staticToken = settings.upload.api_token;
  const storage = storageOf(resources);
  return {
    services,
    storage,
    exports: buildAccountExports({
      table,
      storage,
      masterKey: masterKeyOf(resources),
      baseUrl: settings.base_url,
      listingShards: settings.listing_shards,
    }),
    moderation: buildReviews({
      table,
      files: services.files,
      storage,
      deletions: services.deletions,
      accounts: shared.repository,
      blockList,
      shards: settings.listing_shards,
      auditRetentionDays: settings.audit.retention_days,
    }),
    bandwidth: buildBandwidthUsage({
      table,
      defaultQuotaBytes: settings.upload.default_quota_bytes,
      defaultBytes: settings.bandwidth.default_bytes,
    }),
    webhooks: buildWebhooks({
      table,
      masterKey: masterKeyOf(resources),
      allowPrivate: webhookPrivateTargets(settings),
      listingShards: settings.listing_shards,
      baseUrl: settings.base_url,
    }),
    renditionUrl: renditionUrlSigner(settings, renditionSecretsOf(resources)),
    compatLinks: deleteLinks({
      key: sealedKey(table, masterKeyOf(resources), 'compat-delete-link'),
      baseUrl: settings.base_url,
    }),
    authenticate: createAuthenticator({
      sessions: shared.sessions,
      apiTokens: shared.apiTokens,
      ...(staticToken ? { staticToken: { token: staticToken, owner: services.staticTokenOwner } } : {}),
      requireAdminSecondFactor: adminSecondFactorRequired(settings),
    }),
  };
}

let deps: FilesDeps | undefined;

export function filesDeps(): FilesDeps {
  deps ??= buildFilesDeps(groupResources('files', needs, config));
  return deps;
}
