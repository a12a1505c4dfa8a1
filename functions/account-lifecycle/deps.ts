// The account-lifecycle worker's dependencies, built once per container from its needs and settings.

import { buildLifecycleWorker } from '#lib/lifecycle/build.ts';
import type { LifecycleWorker } from '#lib/lifecycle/worker.ts';
import { config } from '#lib/platform/config/index.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface LifecycleDeps {
  worker: LifecycleWorker;
}

export function buildLifecycleDeps(resources: GroupResources): LifecycleDeps {
  const { settings } = resources;
  return {
    worker: buildLifecycleWorker({
      table: tableOf(resources),
      storage: storageOf(resources),
      masterKey: masterKeyOf(resources),
      mailer: mailerOf(resources),
      baseUrl: settings.base_url,
      listingShards: settings.listing_shards,
      cdnMaxAgeSeconds: settings.cdn.deleted_max_age_seconds,
    }),
  };
}

let deps: LifecycleDeps | undefined;

export function lifecycleDeps(): LifecycleDeps {
  deps ??= buildLifecycleDeps(groupResources('account-lifecycle', needs, config));
  return deps;
}
