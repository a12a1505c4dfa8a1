// Creates this test file's table and bucket on the stand-ins (call once, in beforeAll).

import { ensureBucket, ensureTable } from '#infra/local/provision.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';

export async function provisionTestStack(): Promise<{ table: Table }> {
  const table = new Table(dynamoClient(config.aws), config.table_name);
  await Promise.all([
    ensureTable(dynamoClient(config.aws) as never, config.table_name, {
      table,
      listingShards: config.listing_shards,
    }),
    ensureBucket(s3Client(config.aws), config.bucket_name),
  ]);
  return { table };
}
