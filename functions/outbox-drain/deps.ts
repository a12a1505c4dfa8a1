// The outbox-drain function's dependencies, built once per container from its needs and settings.

import { OutboxDelivery } from '#lib/billing/outbox.ts';
import { config } from '#lib/platform/config/index.ts';
import { eventsOf } from '#lib/wiring/events.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface OutboxDrainDeps {
  delivery: OutboxDelivery;
}

export function buildOutboxDrainDeps(resources: GroupResources): OutboxDrainDeps {
  return {
    // EventBridge when the deployment names a bus, else the log (lib/wiring/events.ts): locally the
    // event still appears as one log line.
    delivery: new OutboxDelivery({
      table: tableOf(resources),
      publisher: eventsOf(resources),
      listingShards: resources.settings.listing_shards,
      ...(resources.clock ? { clock: resources.clock } : {}),
    }),
  };
}

let deps: OutboxDrainDeps | undefined;

export function outboxDrainDeps(): OutboxDrainDeps {
  deps ??= buildOutboxDrainDeps(groupResources('outbox-drain', needs, config));
  return deps;
}
