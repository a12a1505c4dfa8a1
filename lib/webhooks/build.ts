// Builds the webhooks (docs/WEBHOOKS.md) for the files group (the owner's routes) and the outbox drain (the
// fan-out, the first attempt, and the retries on its schedule): the table and the master key alone.
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { WebhookDeliveries } from './deliveries.ts';
import { WebhookEndpoints } from './endpoints.ts';

export interface WebhooksInput {
  table: Table;
  masterKey: () => Promise<MasterKey>;
  /** `webhooks.allow_private_targets` where the stage allows it (never in production). */
  allowPrivate: boolean;
  listingShards: number;
  /** `base_url`: the events' file URLs. */
  baseUrl: string;
}

export interface Webhooks {
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
}

export function buildWebhooks(input: WebhooksInput): Webhooks {
  const policy = { allowPrivate: input.allowPrivate };
  const endpoints = new WebhookEndpoints({ table: input.table, masterKey: input.masterKey, policy });
  const deliveries = new WebhookDeliveries({
    table: input.table,
    endpoints,
    policy,
    listingShards: input.listingShards,
    baseUrl: input.baseUrl,
  });
  return { endpoints, deliveries };
}
