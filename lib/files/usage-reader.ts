// Reading accounts' usage for other capabilities: the back office's account listing (lib/accounts
// AccountUsageReader), many accounts at once, 100 per round trip, bytes served this month beside it.
import type { BandwidthUsage } from './bandwidth.ts';
import type { QuotaAccount, QuotaService } from './quota-service.ts';

/** The back office's view of usage: counters, the quota in force and the bytes served this month. */
export function usageReader(
  quota: Pick<QuotaService, 'usagesOf'>,
  bandwidth: Pick<BandwidthUsage, 'usedMany'>,
) {
  return {
    async usageOf(accounts: readonly QuotaAccount[]) {
      const [views, served] = await Promise.all([
        quota.usagesOf(accounts),
        bandwidth.usedMany(accounts.map((account) => account.id)),
      ]);
      return new Map(
        [...views].map(([id, view]) => [
          id,
          {
            used_bytes: view.used_bytes,
            file_count: view.file_count,
            quota_bytes: view.quota_bytes,
            bandwidth_bytes_used: served.get(id) ?? 0,
          },
        ]),
      );
    },
  };
}
