// Reading accounts' usage for other capabilities: the back office's account listing (lib/accounts
// AccountUsageReader), many accounts at once, 100 per round trip.
import type { Table } from '#lib/platform/db/table.ts';
import { buildQuota, type QuotaAccount } from './quota-service.ts';

export interface UsageReadInput {
  table: Table;
  /** `upload.default_quota_bytes`. */
  defaultQuotaBytes: number;
  clock?: () => Date;
}

/** The back office's view of usage: counters and the quota in force. */
export function usageReader(input: UsageReadInput) {
  return {
    async usageOf(accounts: readonly QuotaAccount[]) {
      const views = await buildQuota(input).usagesOf(accounts);
      return new Map(
        [...views].map(([id, view]) => [
          id,
          { used_bytes: view.used_bytes, file_count: view.file_count, quota_bytes: view.quota_bytes },
        ]),
      );
    },
  };
}
