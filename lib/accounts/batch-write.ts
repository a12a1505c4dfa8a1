// One BatchWriteItem for writes that need no condition (the login's session, event and guard reset).
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Item, Key, Table } from '#lib/platform/db/table.ts';

/**
 * Unconditional puts and deletes in one BatchWriteItem (at most 25): one round trip where each item is
 * billed as a plain write. Items DynamoDB leaves unprocessed under load are sent again, a few times.
 */
export async function writeBatch(table: Table, puts: Array<Item & Key>, deletes: Key[] = []): Promise<void> {
  let requests: Array<Record<string, unknown>> = [
    ...puts.map((item) => ({ PutRequest: { Item: item } })),
    ...deletes.map((key) => ({ DeleteRequest: { Key: key } })),
  ];
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt > 0) {
      if (attempt > 4) throw new Error('DynamoDB left batch writes unprocessed');
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    }
    const { UnprocessedItems } = await table.client.send(
      new BatchWriteCommand({ RequestItems: { [table.name]: requests as never } }),
    );
    requests = (UnprocessedItems?.[table.name] ?? []) as Array<Record<string, unknown>>;
  }
}
