// `npm run usage:recount`: recounts every account's storage usage from its file records (docs/UPLOADS.md,
// "Storage quota"). Run it once after deploying quotas, against the deployed table (TABLE_NAME and AWS
// credentials) or the local one while `npm start` runs. Idempotent, and safe while the service runs.
import { loadSettingsOrExit } from './settings.ts';

async function main(): Promise<void> {
  await loadSettingsOrExit();
  const [{ config }, { dynamoClient }, { Table }, { recountUsage }] = await Promise.all([
    import('#lib/platform/config/index.ts'),
    import('#lib/platform/aws/dynamodb.ts'),
    import('#lib/platform/db/table.ts'),
    import('#lib/files/usage-recount.ts'),
  ]);
  const table = new Table(dynamoClient(config.aws), config.table_name);
  const report = await recountUsage(table);
  console.log(
    `Usage recounted in table ${config.table_name}: ${report.accounts} account(s) checked, ` +
      `${report.counted_files} file(s) stored before quotas counted, ${report.corrected.length} account(s) corrected.`,
  );
  for (const fix of report.corrected) {
    console.log(
      `  ${fix.account_id}: ${fix.before.used_bytes} bytes / ${fix.before.file_count} files -> ` +
        `${fix.after.used_bytes} bytes / ${fix.after.file_count} files`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(`Failed: ${(error as Error).message}`);
  process.exit(1);
});
