// Builds the quota service (reservations, grants, usage) over the table: the upload, payments and settling
// functions each build theirs here, and the back office reads usage through it (usage-reader.ts).
import type { Table } from '#lib/platform/db/table.ts';
import { QuotaService } from './quota-service.ts';
import { type UploadRate, UploadRates } from './upload-rate.ts';
import { UsageRepository } from './usage.ts';

export interface QuotaInput {
  table: Table;
  /** `upload.default_quota_bytes`. */
  defaultQuotaBytes: number;
  /** `upload.rate` and `upload.rate_by_plan` (absent: uploads have no rate, e.g. where nothing uploads). */
  rates?: { rate: UploadRate; byPlan: Readonly<Record<string, Partial<UploadRate>>> };
}

export function buildQuota({ table, defaultQuotaBytes, rates }: QuotaInput): QuotaService {
  return new QuotaService({
    usage: new UsageRepository({ table }),
    clock: table.clock,
    defaultQuotaBytes,
    rates: rates && new UploadRates({ table, ...rates }),
  });
}
