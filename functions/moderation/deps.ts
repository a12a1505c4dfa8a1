// The moderation worker's dependencies, built once per container from its needs and settings.
import { buildFileRepository } from '#lib/files/build-records.ts';
import { isGrantActive } from '#lib/files/quota-model.ts';
import { buildClassification } from '#lib/moderation/build.ts';
import type { ClassificationService } from '#lib/moderation/classification.ts';
import { config } from '#lib/platform/config/index.ts';
import { classifierOf } from '#lib/wiring/classifier.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { quotaOf } from '#lib/wiring/shared.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface ModerationDeps {
  classification: ClassificationService;
}

export function buildModerationDeps(resources: GroupResources): ModerationDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const quota = quotaOf(resources);
  const { hold_above, flag_above, plans } = settings.moderation;
  return {
    classification: buildClassification({
      table,
      files: buildFileRepository({
        table,
        baseUrl: settings.base_url,
        listingShards: settings.listing_shards,
      }),
      storage: storageOf(resources),
      shards: settings.listing_shards,
      classifier: classifierOf(resources),
      policy: { hold_above, flag_above, plans },
      planOf: async (ownerId) => {
        const { state } = await quota.stateFor({ id: ownerId, role: 'user' });
        return isGrantActive(state.grant, table.clock()) ? state.grant.plan_id : undefined;
      },
    }),
  };
}

let deps: ModerationDeps | undefined;

export function moderationDeps(): ModerationDeps {
  deps ??= buildModerationDeps(groupResources('moderation', needs, config));
  return deps;
}
