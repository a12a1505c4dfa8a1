// The outbox-drain function's dependencies, built once per container from its needs and settings.

import { buildOutbox } from '#lib/billing/build-outbox.ts';
import type { OutboxDelivery } from '#lib/billing/outbox.ts';
import { config } from '#lib/platform/config/index.ts';
import { webhookPrivateTargets } from '#lib/platform/config/schema.ts';
import { buildWebhooks } from '#lib/webhooks/build.ts';
import type { WebhookDeliveries } from '#lib/webhooks/deliveries.ts';
import { eventsOf } from '#lib/wiring/events.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface OutboxDrainDeps {
  delivery: OutboxDelivery;
  /** The webhooks of the stream's new files, deletions and paid orders, and their retries. */
  webhooks: WebhookDeliveries;
}

export function buildOutboxDrainDeps(resources: GroupResources): OutboxDrainDeps {
  const { settings } = resources;
  return {
    webhooks: buildWebhooks({
      table: tableOf(resources),
      masterKey: masterKeyOf(resources),
      allowPrivate: webhookPrivateTargets(settings),
      listingShards: settings.listing_shards,
      baseUrl: settings.base_url,
    }).deliveries,
    // EventBridge when the deployment names a bus, else the log (lib/wiring/events.ts): locally the
    // event still appears as one log line.
    delivery: buildOutbox({
      table: tableOf(resources),
      publisher: eventsOf(resources),
      listingShards: settings.listing_shards,
    }),
  };
}

let deps: OutboxDrainDeps | undefined;

export function outboxDrainDeps(): OutboxDrainDeps {
  deps ??= buildOutboxDrainDeps(groupResources('outbox-drain', needs, config));
  return deps;
}
