// The local stand-in for the moderation worker's event source mapping (infra/workers.ts): reads the table's
// stream on DynamoDB Local from its newest record on (as the stack's mapping starts at LATEST), keeps what
// the stack's filter keeps (INSERT of a `file#` key), and calls the same handler, a few records at a time,
// retrying from the first failed record as Lambda does. Under npm start the worker runs in its own process.
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { MODERATION_BATCH } from '#lib/moderation/classification.ts';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { FILE_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import { type DrainInvoke, LocalStreamPoller, pollEvery } from './outbox-drain.ts';

/** The stack's filter on the moderation worker's mapping: new file records only. */
export function isFileInsert(record: DynamoDBRecord): boolean {
  return record.eventName === 'INSERT' && (record.dynamodb?.Keys?.pk?.S ?? '').startsWith(FILE_KEY_PREFIX);
}

export interface LocalModeration {
  poller: LocalStreamPoller;
  stop(): Promise<void>;
}

/**
 * Starts reading the stream; resolves once the reader stands at the stream's end (files stored from then
 * on are classified). `invoke` is the worker's own process (npm start); without it the handler runs here.
 */
export async function startLocalModeration(options: {
  aws: Pick<AwsSettings, 'region' | 'dynamodb_endpoint'>;
  tableName: string;
  invoke?: DrainInvoke;
  intervalMs?: number;
}): Promise<LocalModeration> {
  const invoke: DrainInvoke =
    options.invoke ??
    (async (event) => {
      const { handler } = await import('#functions/moderation/handler.ts');
      return handler(event as DynamoDBStreamEvent, {} as never);
    });
  const poller = new LocalStreamPoller({
    aws: options.aws,
    tableName: options.tableName,
    invoke,
    accepts: isFileInsert,
    ...MODERATION_BATCH,
    startAt: 'latest',
    name: 'moderation',
  });
  await poller.pollOnce();
  const loop = pollEvery(poller, options.intervalMs ?? 1_000, 'the local moderation worker');
  loop.start();
  return { poller, stop: () => loop.stop() };
}
