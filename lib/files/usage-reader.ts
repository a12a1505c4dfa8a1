// Reading accounts' usage for other capabilities: the back office's account listing (lib/accounts
// AccountUsageReader), many accounts at once, 100 per round trip.
import type { QuotaAccount, QuotaService } from './quota-service.ts';

/** The back office's view of usage: counters and the quota in force. */
export function usageReader(quota: Pick<QuotaService, 'usagesOf'>) {
  return {
    async usageOf(accounts: readonly QuotaAccount[]) {
      const views = await quota.usagesOf(accounts);
      return new Map(
        [...views].map(([id, view]) => [
          id,
          { used_bytes: view.used_bytes, file_count: view.file_count, quota_bytes: view.quota_bytes },
        ]),
      );
    },
  };
}
