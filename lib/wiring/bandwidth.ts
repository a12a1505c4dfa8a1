// Builds bandwidth's reader (the usage route, the back office) and the worker's meter (docs/UPLOADS.md
// "Bandwidth").
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { PlanRepository } from '#lib/billing/plans.ts';
import { BandwidthUsage } from '#lib/files/bandwidth.ts';
import { BandwidthMeter } from '#lib/files/bandwidth-meter.ts';
import { buildOwnerRules } from '#lib/files/build-owner-rules.ts';
import { buildQuota } from '#lib/files/build-quota.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import type { AccessLogStore } from '#lib/platform/storage/access-logs.ts';

export interface BandwidthUsageInput {
  table: Table;
  /** `upload.default_quota_bytes` (the quota service reads the grant alongside it). */
  defaultQuotaBytes: number;
  /** `bandwidth.default_bytes`. */
  defaultBytes: number | undefined;
}

export function buildBandwidthUsage({ table, defaultQuotaBytes, defaultBytes }: BandwidthUsageInput) {
  return new BandwidthUsage({
    table,
    clock: table.clock,
    quota: buildQuota({ table, defaultQuotaBytes }),
    plans: new PlanRepository({ table }),
    defaultBytes,
  });
}

export interface BandwidthMeterInput extends BandwidthUsageInput {
  logs: AccessLogStore;
  accounts: Pick<AccountRepository, 'get'>;
  mailer: Mailer;
  gracePercent: number;
  /** `listing_shards` (the owners' rules' pending listing). */
  shards: number;
}

export function buildBandwidthMeter(input: BandwidthMeterInput): BandwidthMeter {
  const { table, logs, accounts, mailer, gracePercent, shards } = input;
  return new BandwidthMeter({
    table,
    logs,
    usage: buildBandwidthUsage(input),
    accounts,
    ownerRules: buildOwnerRules({ table, shards }),
    mailer,
    gracePercent,
  });
}
