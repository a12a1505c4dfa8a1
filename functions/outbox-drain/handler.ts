// Lambda entry of the `outbox-drain` worker (docs/DESIGN.md 14): the table's stream brings each order.paid
// event settlement wrote to the outbox (INSERT of an `OUTBOX#` key, filtered by the event source mapping);
// the drain publishes the batch in one PutEvents call and marks each accepted event delivered. An event it cannot publish goes back as a batch item
// failure: Lambda retries it, then hands the batch to the dead-letter queue, and the event stays pending in
// the table for a re-drive (`{"action":"redeliver-pending"}`, below; docs/DEPLOYMENT.md "Operating it").
// The same batches bring what webhooks are made of (docs/WEBHOOKS.md): new file records, file.deleted outbox
// items, and the order.paid ones again; each makes its deliveries and tries them once. A schedule's
// `{"action":"webhook-retries"}` tries again those that failed, on their back-off.
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { PUT_EVENTS_MAX_ENTRIES } from '#lib/billing/order-events.ts';
import { isOutboxKey, type RedeliverySummary } from '#lib/billing/outbox.ts';
import { log } from '#lib/platform/log.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { isWebhookSource, type StreamChange } from '#lib/webhooks/events.ts';
import { type OutboxDrainDeps, outboxDrainDeps } from './deps.ts';

/** Re-drive: deliver what is still pending and older than this (the stream had its chance). */
export const DEFAULT_REDRIVE_AGE_MINUTES = 15;
const MAX_REDRIVE_LIMIT = 10_000;

/**
 * An operator's (or a schedule's) direct invocation: deliver every event still pending that was written
 * more than `older_than_minutes` ago (default 15), at most `limit` (default 1000), oldest first.
 */
export interface RedeliverRequest {
  action: 'redeliver-pending';
  older_than_minutes?: number;
  limit?: number;
}

/** The schedule's request (every minute): webhook deliveries due again after a failed attempt. */
export interface WebhookRetriesRequest {
  action: 'webhook-retries';
}

export interface OutboxDrainHandler {
  (event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse>;
  (event: RedeliverRequest, context?: Context): Promise<RedeliverySummary>;
  (event: WebhookRetriesRequest, context?: Context): Promise<{ tried: number }>;
  (
    event: DynamoDBStreamEvent | RedeliverRequest | WebhookRetriesRequest,
    context?: Context,
  ): Promise<DynamoDBBatchResponse | RedeliverySummary | { tried: number }>;
}

/**
 * The drain over the given dependencies, as one observed invocation (its log lines carry the invocation's
 * ids; its metrics, OutboxDelivered, OutboxDeliveryFailed and OutboxAgeMs, are written at its end).
 */
export function createOutboxDrainHandler(deps: () => OutboxDrainDeps): OutboxDrainHandler {
  async function drainStream(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
    const { delivery } = deps();
    const records: Array<{ key: { pk: string; sk: string }; sequenceNumber: string }> = [];
    const changes: Array<StreamChange & { sequenceNumber: string }> = [];
    for (const record of event.Records) {
      const key = insertedKeyOf(record);
      // The mapping's filter lets only outbox and file INSERTs through; anything else is not ours.
      if (!key || !(isOutboxKey(key) || isWebhookSource(key))) continue;
      const sequenceNumber = record.dynamodb?.SequenceNumber;
      // Without its sequence number a record cannot be reported alone: fail the batch, Lambda retries it.
      if (!sequenceNumber) throw new Error('A stream record without a sequence number');
      if (isOutboxKey(key)) records.push({ key, sequenceNumber });
      if (isWebhookSource(key)) changes.push({ key, image: record.dynamodb?.NewImage, sequenceNumber });
    }
    const batchItemFailures: DynamoDBBatchResponse['batchItemFailures'] = [];
    // Webhook deliveries are made once (their keys come from the events): a failed batch is retried whole.
    await deps()
      .webhooks.fromStream(changes)
      .catch((error: unknown) => {
        log.error('webhook deliveries could not be made; the stream retries them', { error });
        for (const { sequenceNumber } of changes) batchItemFailures.push({ itemIdentifier: sequenceNumber });
      });
    // The mapping's batches are PutEvents-sized (infra/workers.ts): one call publishes them all.
    for (let from = 0; from < records.length; from += PUT_EVENTS_MAX_ENTRIES) {
      const chunk = records.slice(from, from + PUT_EVENTS_MAX_ENTRIES);
      const results = await delivery.deliverMany(chunk.map(({ key }) => key));
      results.forEach(({ outcome, error }, index) => {
        const { key, sequenceNumber } = chunk[index]!;
        // Refused by the bus, or another drain (a re-drive) is delivering it now and may yet fail: Lambda
        // retries from it; those after it that were delivered are found delivered and not sent again.
        if (outcome === 'failed') {
          log.error('order.paid could not be delivered; the stream retries it', { key: key.pk, error });
          batchItemFailures.push({ itemIdentifier: sequenceNumber });
        }
        if (outcome === 'busy') batchItemFailures.push({ itemIdentifier: sequenceNumber });
        if (outcome === 'gone')
          log.warn('a stream record names an outbox event that is gone', { key: key.pk });
      });
    }
    return { batchItemFailures };
  }

  async function redeliver(request: RedeliverRequest): Promise<RedeliverySummary> {
    const minutes = request.older_than_minutes ?? DEFAULT_REDRIVE_AGE_MINUTES;
    const limit = request.limit ?? 1000;
    if (typeof minutes !== 'number' || !Number.isFinite(minutes) || minutes < 0) {
      throw new Error('older_than_minutes: must be a number of minutes, 0 or more');
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REDRIVE_LIMIT) {
      throw new Error(`limit: must be a whole number from 1 to ${MAX_REDRIVE_LIMIT}`);
    }
    const { delivery } = deps();
    const summary = await delivery.redeliverPending({ olderThanMs: minutes * 60_000, limit });
    log.info('outbox re-drive', { older_than_minutes: minutes, ...summary });
    return summary;
  }

  type DrainEvent = DynamoDBStreamEvent | RedeliverRequest | WebhookRetriesRequest;
  const run = observeInvocation('outbox-drain', async (event: DrainEvent) => {
    if (isRedeliverRequest(event)) return redeliver(event);
    if ((event as { action?: unknown })?.action === 'webhook-retries')
      return { tried: await deps().webhooks.retryDue() };
    if (Array.isArray((event as DynamoDBStreamEvent)?.Records))
      return drainStream(event as DynamoDBStreamEvent);
    throw new Error(
      'outbox-drain takes a DynamoDB stream event, {"action":"redeliver-pending"} or {"action":"webhook-retries"}',
    );
  });
  return ((event: DrainEvent, context?: Context) => run(event, context as Context)) as OutboxDrainHandler;
}

function isRedeliverRequest(event: unknown): event is RedeliverRequest {
  return (event as { action?: unknown })?.action === 'redeliver-pending';
}

/** The key of an INSERT record, or undefined for any other record. */
function insertedKeyOf(record: DynamoDBRecord): { pk: string; sk: string } | undefined {
  const keys = record.dynamodb?.Keys;
  const [pk, sk] = [keys?.pk?.S, keys?.sk?.S];
  return record.eventName === 'INSERT' && pk !== undefined && sk !== undefined ? { pk, sk } : undefined;
}

export const handler = createOutboxDrainHandler(outboxDrainDeps);
