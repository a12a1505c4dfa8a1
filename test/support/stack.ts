// Creates this test file's table and bucket on the stand-ins (call once, in beforeAll); setup-env.ts drops
// the table when the file is done: DynamoDB Local keeps every table of the run in one process's memory, and a few
// hundred of them (each with its indexes) slow every later file's requests.

import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureBucket, ensureTable } from '#infra/local/provision.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';

/** Drops this file's table, if it made one (setup-env.ts, after the file's tests). */
export async function dropTestTable(): Promise<void> {
  await dynamoClient(config.aws)
    .send(new DeleteTableCommand({ TableName: config.table_name }))
    .catch(() => undefined);
}

export async function provisionTestStack(): Promise<{ table: Table }> {
  const table = new Table(dynamoClient(config.aws), config.table_name);
  await Promise.all([
    ensureTable(dynamoClient(config.aws) as never, config.table_name, {
      table,
      listingShards: config.listing_shards,
    }),
    ensureBucket(s3Client(config.aws), config.bucket_name),
    ensureBucket(s3Client(config.aws), config.access_log_bucket_name),
  ]);
  return { table };
}
