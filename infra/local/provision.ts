// Creates the table and bucket on the local stand-ins when they are missing (idempotent).
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  type TableDescription,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  PutBucketCorsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createTableInput, TABLE_STREAM_VIEW } from '#lib/platform/db/keys.ts';

export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const found = await client.send(new DescribeTableCommand({ TableName: tableName })).then(
    (answer) => answer.Table,
    (error: unknown) => {
      if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
      return undefined;
    },
  );
  if (found) return ensureStream(client, tableName, found);
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
  if (stream?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }),
    );
  }
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_STREAM_VIEW },
    }),
  );
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
