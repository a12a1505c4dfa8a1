// The single table's key schema, defined once: the CDK table and the local/test tables are built from it.
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds. DynamoDB deletes such items eventually; reads treat them as absent at once. */
  ttlAttribute: 'expires_at',
  indexes: [
    // gsi1: look-ups by a second identity (e.g. a file's owner listing, an order's owner listing).
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    // gsi2: global listings (public gallery, all orders for administrators).
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

export type IndexName = (typeof TABLE.indexes)[number]['name'];

/** CreateTable input for DynamoDB Local and tests (on-demand billing, like production). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const attributes = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const index of TABLE.indexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    })),
  };
}
