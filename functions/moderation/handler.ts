// Lambda entry of the `moderation` worker (docs/MODERATION.md "Classification"): the table's stream brings
// each new file record (INSERT of a `file#` key, filtered by the event source mapping, infra/workers.ts);
// each is classified in turn and its moderation written. A file whose bytes are not stored yet, or that the
// classifier failed on (its record then says so: flagged, or held under hold-all), goes back as a batch
// item failure: Lambda retries it, then hands it to the dead-letter queue, and the record keeps its stated
// state for a person to review.
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { FILE_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import { log } from '#lib/platform/log.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type ModerationDeps, moderationDeps } from './deps.ts';

export type ModerationHandler = (
  event: DynamoDBStreamEvent,
  context: Context,
) => Promise<DynamoDBBatchResponse>;

export function createModerationHandler(deps: () => ModerationDeps): ModerationHandler {
  return observeInvocation('moderation', async (event: DynamoDBStreamEvent) => {
    const { classification } = deps();
    const batchItemFailures: DynamoDBBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      const fileId = fileIdOf(record);
      if (fileId === undefined) continue;
      try {
        await classification.classify(fileId);
      } catch (error) {
        log.warn('a file was not classified; the stream retries it', {
          file_id: fileId,
          error_name: (error as { name?: string } | undefined)?.name,
        });
        const sequenceNumber = record.dynamodb?.SequenceNumber;
        if (!sequenceNumber) throw error;
        // Lambda retries from the first failure: the rest of the batch goes with it.
        batchItemFailures.push({ itemIdentifier: sequenceNumber });
        break;
      }
    }
    return { batchItemFailures };
  });
}

function fileIdOf(record: DynamoDBRecord): string | undefined {
  const pk = record.dynamodb?.Keys?.pk?.S ?? '';
  return record.eventName === 'INSERT' && pk.startsWith(FILE_KEY_PREFIX)
    ? pk.slice(FILE_KEY_PREFIX.length)
    : undefined;
}

export const handler = createModerationHandler(moderationDeps);
