// `npm run migrate:shards`: brings items written in an older key shape to the current one (listings of
// everything spread over `listing_shards` shards, identifier claims out of the `owner` index), and moves
// listed items to their shard after a change of `listing_shards` (docs/DEPLOYMENT.md, "Moving to the
// sharded listings"). Against the deployed table (TABLE_NAME and AWS credentials) or the local one.
// Idempotent (a second run updates nothing) and safe while the service runs.
import { loadSettingsOrExit } from './settings.ts';

async function main(): Promise<void> {
  await loadSettingsOrExit();
  const [{ config }, { dynamoClient }, { Table }, { describeReport, migrateItems }] = await Promise.all([
    import('#lib/platform/config/index.ts'),
    import('#lib/platform/aws/dynamodb.ts'),
    import('#lib/platform/db/table.ts'),
    import('#infra/migrate-items.ts'),
  ]);
  const table = new Table(dynamoClient(config.aws), config.table_name);
  const report = await migrateItems(table, { listingShards: config.listing_shards });
  console.log(`Items migrated in table ${config.table_name} (listing_shards ${config.listing_shards}):`);
  for (const line of describeReport(report)) console.log(line);
}

main().catch((error: unknown) => {
  console.error(`Failed: ${(error as Error).message}`);
  process.exit(1);
});
