// The takedowns worker's dependencies, built once per container from its needs and settings.

import { buildOwnerRules } from '#lib/files/build-owner-rules.ts';
import type { OwnerRulesDesk } from '#lib/files/owner-rules.ts';
import { buildEdgeHolds } from '#lib/moderation/build.ts';
import type { EdgeHolds } from '#lib/moderation/edge-holds.ts';
import { buildTakedowns } from '#lib/platform/cdn/build-takedowns.ts';
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import type { Takedowns } from '#lib/platform/cdn/takedowns.ts';
import { config } from '#lib/platform/config/index.ts';
import { cdnOf, edgeDenyListOf } from '#lib/wiring/cdn.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface TakedownsDeps {
  takedowns: Takedowns;
  /** The owners' rules changed since the last run, copied to the edge's store by each run. */
  ownerRules: OwnerRulesDesk;
  /** The files held for review or released since the last run, copied to the edge's store by each run. */
  holds: EdgeHolds;
  /** CloudFront where the deployment names a distribution; locally a no-op, so the batch is just cleared. */
  cdn: Invalidator;
  /** The KeyValueStore the edge reads where the deployment names one; locally the table's record alone. */
  denyList: EdgeDenyList;
}

export function buildTakedownsDeps(resources: GroupResources): TakedownsDeps {
  const { settings } = resources;
  return {
    takedowns: buildTakedowns({
      table: tableOf(resources),
      shards: settings.listing_shards,
      edgeMaxAgeSeconds: settings.cdn.deleted_max_age_seconds,
    }),
    ownerRules: buildOwnerRules({ table: tableOf(resources), shards: settings.listing_shards }),
    holds: buildEdgeHolds({ table: tableOf(resources), shards: settings.listing_shards }),
    cdn: cdnOf(resources),
    denyList: edgeDenyListOf(resources),
  };
}

let deps: TakedownsDeps | undefined;

export function takedownsDeps(): TakedownsDeps {
  deps ??= buildTakedownsDeps(groupResources('takedowns', needs, config));
  return deps;
}
