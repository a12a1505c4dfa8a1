// Creates the table and bucket on the local stand-ins when they are missing (idempotent), and brings a
// table made before to the current shape: its stream, its indexes, and its items (infra/migrate-items.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndexDescription,
  type StreamSpecification,
  type TableDescription,
  UpdateTableCommand,
  type UpdateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  PutBucketCorsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createTableInput, TABLE_STREAM_VIEW } from '#lib/platform/db/keys.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { describeReport, migrateItems } from '../migrate-items.ts';

/** What a table made before needs for its items to be migrated in place (`npm run migrate:shards`). */
export interface ItemsMigration {
  table: Table;
  listingShards: number;
  /** Where the migration's counts go when it changed anything; default: nowhere. */
  report?: (lines: string[]) => void;
}

/**
 * Creates the table, or brings the one found to the current shape: stream, indexes (one change at a time,
 * as DynamoDB allows), then, with `migration`, its items, so an `npm start` user's data keeps working.
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  migration?: ItemsMigration,
): Promise<void> {
  const found = await describe(client, tableName);
  if (found) {
    await ensureStream(client, tableName, found);
    await ensureIndexes(client, tableName, found);
    if (migration) {
      const report = await migrateItems(migration.table, { listingShards: migration.listingShards });
      const changed = Object.values(report.migrations).some((counts) => counts.updated + counts.skipped > 0);
      if (changed) migration.report?.(describeReport(report));
    }
    return;
  }
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
  }
}

/**
 * A table made before the outbox (docs/DESIGN.md 14) has no stream, or another view of it: the local
 * outbox drain reads the stream, so it is switched to the stack's view (a view cannot change in place).
 */
async function ensureStream(
  client: DynamoDBClient,
  tableName: string,
  table: TableDescription,
): Promise<void> {
  const stream = table.StreamSpecification;
  if (stream?.StreamEnabled && stream.StreamViewType === TABLE_STREAM_VIEW) return;
  const setStream = (StreamSpecification: StreamSpecification) =>
    client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification }));
  if (stream?.StreamEnabled) await setStream({ StreamEnabled: false });
  await setStream({ StreamEnabled: true, StreamViewType: TABLE_STREAM_VIEW });
}

async function describe(client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  return client.send(new DescribeTableCommand({ TableName: tableName })).then(
    (answer) => answer.Table,
    (error: unknown) => {
      if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
      return undefined;
    },
  );
}

/**
 * A table made before has other indexes (`gsi1`/`gsi2` projecting every attribute, or the current names
 * with another projection): each one not as lib/platform/db/keys.ts defines it is deleted and each missing
 * one created, one at a time, each waited for (a projection cannot change in place).
 */
async function ensureIndexes(client: DynamoDBClient, tableName: string, table: TableDescription) {
  const wanted = createTableInput(tableName);
  const wantedIndexes = wanted.GlobalSecondaryIndexes ?? [];
  const existing = table.GlobalSecondaryIndexes ?? [];
  const same = (index: GlobalSecondaryIndexDescription) =>
    wantedIndexes.some((candidate) => candidate.IndexName === index.IndexName && sameShape(candidate, index));
  const update = async (change: Omit<UpdateTableCommandInput, 'TableName'>) => {
    await client.send(new UpdateTableCommand({ TableName: tableName, ...change }));
    await settled(client, tableName);
  };
  for (const index of existing.filter((candidate) => !same(candidate)))
    await update({ GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: index.IndexName! } }] });
  const kept = new Set(existing.filter(same).map((index) => index.IndexName));
  for (const index of wantedIndexes.filter((candidate) => !kept.has(candidate.IndexName))) {
    await update({
      AttributeDefinitions: wanted.AttributeDefinitions,
      GlobalSecondaryIndexUpdates: [{ Create: index }],
    });
  }
}

function sameShape(
  wanted: { KeySchema?: unknown; Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] } },
  found: GlobalSecondaryIndexDescription,
): boolean {
  const attributes = (list: string[] | undefined) => [...(list ?? [])].sort().join(',');
  return (
    JSON.stringify(wanted.KeySchema) === JSON.stringify(found.KeySchema) &&
    wanted.Projection?.ProjectionType === found.Projection?.ProjectionType &&
    attributes(wanted.Projection?.NonKeyAttributes) === attributes(found.Projection?.NonKeyAttributes)
  );
}

/** Waits until the table and every index are ACTIVE again (an index being deleted is gone by then). */
async function settled(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const table = await describe(client, tableName);
    const indexes = table?.GlobalSecondaryIndexes ?? [];
    if (table?.TableStatus === 'ACTIVE' && indexes.every((index) => index.IndexStatus === 'ACTIVE')) return;
    await sleep(100);
  }
  throw new Error(`Table ${tableName}: its indexes did not become ACTIVE within a minute`);
}

export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  }
  // Browsers PUT presigned uploads straight to storage, as they will to S3.
  await client.send(
    new PutBucketCorsCommand({
      Bucket: bucket,
      CORSConfiguration: {
        CORSRules: [
          {
            AllowedMethods: ['PUT', 'GET', 'HEAD'],
            AllowedOrigins: ['*'],
            AllowedHeaders: ['*'],
            MaxAgeSeconds: 3600,
          },
        ],
      },
    }),
  );
}
