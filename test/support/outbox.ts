// The order.paid outbox in tests: settlement only writes the event; it reaches a publisher when the drain
// runs. drainOutbox() reads this file's table stream on DynamoDB Local (the poller npm start uses) and
// hands what it finds to the outbox-drain handler, as the stack's event source mapping does in AWS.
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { buildOutboxDrainDeps } from '#functions/outbox-drain/deps.ts';
import {
  createOutboxDrainHandler,
  type OutboxDrainHandler,
  handler as productionDrain,
} from '#functions/outbox-drain/handler.ts';
import { needs } from '#functions/outbox-drain/needs.ts';
import { type DrainInvoke, LocalStreamPoller, type PollSummary } from '#infra/local/outbox-drain.ts';
import type { OrderEventPublisher } from '#lib/billing/order-events.ts';
import { config } from '#lib/platform/config/index.ts';
import { testResources } from './resources.ts';

/** The drain handler over this file's table and the given publisher, built by functions/outbox-drain/deps.ts. */
export function testDrainHandler(publisher: OrderEventPublisher) {
  const deps = buildOutboxDrainDeps(
    testResources('outbox-drain', needs, { provided: { events: publisher } }),
  );
  return createOutboxDrainHandler(() => deps);
}

let poller: LocalStreamPoller | undefined;
let target: DrainInvoke = () => Promise.reject(new Error('no drain yet'));

/**
 * Delivers every outbox event written so far in this file (reading the stream from where the last call
 * left it) through `drain` (default: the production handler, whose publisher is the log in tests); a
 * failing batch is retried a few times at once. Resolves once the stream is read to its end.
 */
export function drainOutbox(drain: OutboxDrainHandler = productionDrain): Promise<PollSummary> {
  target = (event) => drain(event as DynamoDBStreamEvent);
  poller ??= new LocalStreamPoller({
    aws: config.aws,
    tableName: config.table_name,
    invoke: (event) => target(event),
    retryAttempts: 3,
    retryDelayMs: () => 5,
  });
  return poller.pollOnce();
}
