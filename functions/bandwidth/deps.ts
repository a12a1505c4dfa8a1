// The bandwidth worker's dependencies, built once per container from its needs and settings.

import { buildAccountRecords } from '#lib/accounts/build-sessions.ts';
import type { BandwidthMeter } from '#lib/files/bandwidth-meter.ts';
import { config } from '#lib/platform/config/index.ts';
import { accessLogsOf } from '#lib/wiring/access-logs.ts';
import { buildBandwidthMeter } from '#lib/wiring/bandwidth.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface BandwidthWorkerDeps {
  meter: BandwidthMeter;
}

export function buildBandwidthDeps(resources: GroupResources): BandwidthWorkerDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  return {
    meter: buildBandwidthMeter({
      table,
      logs: accessLogsOf(resources),
      accounts: buildAccountRecords({ table, listingShards: settings.listing_shards }).repository,
      mailer: mailerOf(resources),
      defaultQuotaBytes: settings.upload.default_quota_bytes,
      defaultBytes: settings.bandwidth.default_bytes,
      gracePercent: settings.bandwidth.grace_percent,
      shards: settings.listing_shards,
    }),
  };
}

let deps: BandwidthWorkerDeps | undefined;

export function bandwidthDeps(): BandwidthWorkerDeps {
  deps ??= buildBandwidthDeps(groupResources('bandwidth', needs, config));
  return deps;
}
