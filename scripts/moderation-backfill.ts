// `npm run moderation:backfill`: classifies every file stored before moderation (docs/MODERATION.md "Files
// stored before moderation") with the deployment's classifier and policy, on this machine: against the
// deployed table and bucket (TABLE_NAME, BUCKET_NAME and AWS credentials) or the local ones while
// `npm start` runs. Idempotent, and safe while the service runs.
import { loadSettingsOrExit } from './settings.ts';

async function main(): Promise<void> {
  await loadSettingsOrExit();
  const [
    { config },
    { buildModerationDeps },
    { needs },
    { groupResources },
    { tableOf },
    { backfillModeration },
  ] = await Promise.all([
    import('#lib/platform/config/index.ts'),
    import('#functions/moderation/deps.ts'),
    import('#functions/moderation/needs.ts'),
    import('#lib/wiring/resources.ts'),
    import('#lib/wiring/table.ts'),
    import('#lib/moderation/backfill.ts'),
  ]);
  const resources = groupResources('moderation', needs, config);
  const { classification } = buildModerationDeps(resources);
  const report = await backfillModeration(tableOf(resources), classification);
  const outcomes = Object.entries(report.outcomes)
    .map(([outcome, count]) => `${count} ${outcome}`)
    .join(', ');
  console.log(
    `Moderation backfill in table ${config.table_name}: ${report.files} file(s) without a moderation` +
      (outcomes ? ` (${outcomes})` : '') +
      (report.failed > 0 ? `; ${report.failed} failed, left flagged (or held) for review` : '') +
      '.',
  );
}

main().catch((error: unknown) => {
  console.error(`Failed: ${(error as Error).message}`);
  process.exit(1);
});
