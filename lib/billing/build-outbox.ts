// Builds the outbox's delivery (outbox.ts) for the outbox-drain worker: the table and the publisher alone,
// so the worker bundles nothing else of billing.
import { OutboxDelivery, type OutboxDeliveryDeps } from './outbox.ts';

export function buildOutbox(input: OutboxDeliveryDeps): OutboxDelivery {
  return new OutboxDelivery(input);
}
