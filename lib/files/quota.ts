// Public API of storage quotas (docs/DESIGN.md 11, docs/UPLOADS.md "Storage quota"): the builder the groups
// wire, the pure rules, and reading accounts' usage for other capabilities (e.g. a back-office listing).
import type { Table } from '#lib/platform/db/table.ts';
import type { UsageView } from './quota-model.ts';
import { buildQuota, type QuotaAccount } from './quota-service.ts';

export type { Grant, GrantTerms, QuotaDefaults, UsageState, UsageView } from './quota-model.ts';
export { effectiveQuota, grantEndsAt, isGrantActive, nextGrant, usageView } from './quota-model.ts';
export type { GrantWrite, QuotaAccount, QuotaInput } from './quota-service.ts';
export { buildQuota, QuotaService, Reservation } from './quota-service.ts';
export { UsageRepository, usageKey } from './usage.ts';

export interface UsageReadInput {
  table: Table;
  /** `upload.default_quota_bytes`. */
  defaultQuotaBytes: number;
  clock?: () => Date;
}

/** One account's usage as `GET /api/v1/usage` shows it (one strongly consistent read). */
export function readAccountUsage(input: UsageReadInput, account: QuotaAccount): Promise<UsageView> {
  return buildQuota(input).usageOf(account);
}

/** The back office's view of usage (lib/accounts AccountUsageReader): counters and the quota in force. */
export function usageReader(input: UsageReadInput) {
  return {
    async usageOf(accounts: readonly QuotaAccount[]) {
      const views = await readAccountUsages(input, accounts);
      return new Map(
        [...views].map(([id, view]) => [
          id,
          { used_bytes: view.used_bytes, file_count: view.file_count, quota_bytes: view.quota_bytes },
        ]),
      );
    },
  };
}

/** Many accounts' usage keyed by account id, 100 accounts per round trip (BatchGetItem). */
export function readAccountUsages(
  input: UsageReadInput,
  accounts: readonly QuotaAccount[],
): Promise<Map<string, UsageView>> {
  return buildQuota(input).usagesOf(accounts);
}
