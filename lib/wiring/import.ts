// The library import (`npm run import`, docs/COMPAT.md) over the files group's resources: the files domain
// as the files function builds it, but with quotas and no upload rate (an operator's one-off import is not a
// client's burst), and the largest file any upload path takes (`upload.presign_max_bytes`, at most what one
// process holds).
import { LibraryImporter } from '#lib/compat/import/importer.ts';
import { buildFiles } from '#lib/files/build.ts';
import { buildQuota } from '#lib/files/build-quota.ts';
import { CONFIRM_MAX_BYTES } from '#lib/files/read-incoming.ts';
import { buildBlockList, buildLikenessCheck } from '#lib/moderation/build.ts';
import type { GroupResources } from './resources.ts';
import { sessionsOf } from './shared.ts';
import { storageOf } from './storage.ts';
import { tableOf } from './table.ts';

export function buildLibraryImporter(
  resources: GroupResources,
  log: (line: string) => void,
): LibraryImporter {
  const { settings } = resources;
  const table = tableOf(resources);
  const accounts = sessionsOf(resources);
  const { upload } = settings;
  const services = buildFiles({
    table,
    storage: storageOf(resources),
    baseUrl: settings.base_url,
    limits: {
      maxBytes: Math.min(upload.presign_max_bytes, CONFIRM_MAX_BYTES),
      presignMaxBytes: upload.presign_max_bytes,
      allowedTypes: upload.allowed_types,
      stripMetadata: upload.strip_metadata,
    },
    quota: buildQuota({ table, defaultQuotaBytes: upload.default_quota_bytes }),
    listingShards: settings.listing_shards,
    trashDays: settings.files.trash_days,
    cdn: { deletedMaxAgeSeconds: settings.cdn.deleted_max_age_seconds },
    accounts,
    likeness: buildLikenessCheck(
      buildBlockList({ table, shards: settings.listing_shards }),
      settings.moderation.block_distance,
    ),
    staticToken: {
      quotaBytes: upload.api_token_quota_bytes,
      rate: {
        perMinute: upload.api_token_rate.per_minute,
        burst: upload.api_token_rate.burst,
        perDay: upload.api_token_rate.per_day,
      },
    },
  });
  return new LibraryImporter({
    table,
    accounts: accounts.repository,
    albums: services.albums,
    uploads: services.directUploads,
    log,
  });
}
