// Brings every item written in an older key shape to the current one (`npm run migrate:shards`, and the
// local runtime's provisioning of a table made before, infra/local/provision.ts): a Scan in parallel
// segments, each item offered to every domain's migrations (lib/platform/db/migration.ts), each update
// conditional on the item as read. A request that changed the item meanwhile wins and the update is
// counted as skipped; a second run finds nothing left to do. The service never scans: only this does.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { accountsMigrations } from '#lib/accounts/migrations.ts';
import { billingMigrations } from '#lib/billing/migrations.ts';
import { filesMigrations } from '#lib/files/migrations.ts';
import type { ItemMigration, MigrationSettings } from '#lib/platform/db/migration.ts';
import { ConditionFailedError, type Item, type Table } from '#lib/platform/db/table.ts';

/** Every domain's migrations, in the order of the layers. */
export const ITEM_MIGRATIONS: readonly ItemMigration[] = [
  ...accountsMigrations,
  ...filesMigrations,
  ...billingMigrations,
];

/** Scan segments read at once (DynamoDB's parallel scan): enough to keep a large table moving. */
const DEFAULT_SEGMENTS = 4;
/** Updates in flight at once per segment. */
const WRITES_PER_SEGMENT = 8;

export interface MigrationCounts {
  /** Items brought to the current shape. */
  updated: number;
  /** Items a request changed between the scan and the update: the request's write stands. */
  skipped: number;
}

export interface MigrationReport {
  scanned: number;
  /** By migration name, every migration listed (0 and 0 when it had nothing to do). */
  migrations: Record<string, MigrationCounts>;
}

export interface MigrateOptions {
  segments?: number;
  migrations?: readonly ItemMigration[];
}

export async function migrateItems(
  table: Table,
  settings: MigrationSettings,
  options: MigrateOptions = {},
): Promise<MigrationReport> {
  const migrations = options.migrations ?? ITEM_MIGRATIONS;
  const segments = options.segments ?? DEFAULT_SEGMENTS;
  const report: MigrationReport = {
    scanned: 0,
    migrations: Object.fromEntries(migrations.map(({ name }) => [name, { updated: 0, skipped: 0 }])),
  };
  const migrate = async (scanned: Item) => {
    let item = scanned;
    // Each migration sees the item as the previous one left it.
    for (const migration of migrations) {
      const planned = migration.plan(item, settings);
      if (!planned) continue;
      const counts = report.migrations[migration.name]!;
      // Several updates are applied in order (an API token's id item listed, then its hash item unlisted);
      // a failed condition leaves the rest to the request that changed the item.
      for (const { Key, ...rest } of Array.isArray(planned) ? planned : [planned]) {
        try {
          const updated = await table.update(Key, rest);
          if (Key.pk === item.pk && Key.sk === item.sk) item = updated;
        } catch (error) {
          if (!(error instanceof ConditionFailedError)) throw error;
          counts.skipped += 1;
          return;
        }
      }
      counts.updated += 1;
    }
  };
  await Promise.all(
    Array.from({ length: segments }, async (_, segment) => {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await table.client.send(
          new ScanCommand({
            TableName: table.name,
            Segment: segment,
            TotalSegments: segments,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        const items = (page.Items ?? []) as Item[];
        report.scanned += items.length;
        await inBatches(items, WRITES_PER_SEGMENT, migrate);
        start = page.LastEvaluatedKey;
      } while (start);
    }),
  );
  return report;
}

/** One line per migration, for the script's and the local runtime's output. */
export function describeReport(report: MigrationReport): string[] {
  return [
    `${report.scanned} item(s) scanned`,
    ...Object.entries(report.migrations).map(
      ([name, counts]) =>
        `  ${name}: ${counts.updated} updated, ${counts.skipped} skipped (changed meanwhile by a request)`,
    ),
  ];
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>) {
  for (let index = 0; index < items.length; index += size) {
    await Promise.all(items.slice(index, index + size).map(work));
  }
}
