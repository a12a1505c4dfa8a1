// Billing's items written in an older key shape (lib/platform/db/migration.ts, `npm run migrate:shards`).
import type { ItemMigration } from '#lib/platform/db/migration.ts';

export const billingMigrations: ItemMigration[] = [];
