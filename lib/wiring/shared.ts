// What several groups build alike over their resources: the sessions every authenticating group shares
// (lib/accounts/build-sessions.ts; needs `table` and `masterKey`), proof of work (the same), the storage
// quota and the audit log of administrators' actions (each needs `table`).
import { AuditLog } from '#lib/accounts/audit-log.ts';
import { buildSessions } from '#lib/accounts/build-sessions.ts';
import { ProofOfWork } from '#lib/accounts/proof-of-work.ts';
import { sealedKey } from '#lib/accounts/sealed-key.ts';
import { TOKEN_SIGNING_KEY } from '#lib/accounts/tokens.ts';
import { buildQuota } from '#lib/files/build-quota.ts';
import { masterKeyOf } from './master-key.ts';
import type { GroupResources } from './resources.ts';
import { tableOf } from './table.ts';

export const sessionsOf = (resources: GroupResources) =>
  buildSessions({
    table: tableOf(resources),
    masterKey: masterKeyOf(resources),
    ttlHours: resources.settings.auth.session_ttl_hours,
    listingShards: resources.settings.listing_shards,
  });

export const quotaOf = (resources: GroupResources) => {
  const { upload } = resources.settings;
  return buildQuota({
    table: tableOf(resources),
    defaultQuotaBytes: upload.default_quota_bytes,
    rates: { rate: upload.rate, byPlan: upload.rate_by_plan },
  });
};

/** The audit log every group with administrator routes records their actions in (lib/http/admin-audit.ts). */
export const auditLogOf = (resources: GroupResources) =>
  new AuditLog({
    table: tableOf(resources),
    shards: resources.settings.listing_shards,
    retentionDays: resources.settings.audit.retention_days,
  });

/** Proof of work (`auth.challenge`): the accounts group's challenge and checks, and the shares group's. */
export const proofOfWorkOf = (resources: GroupResources) => {
  const table = tableOf(resources);
  return new ProofOfWork({
    table,
    signingKey: sealedKey(table, masterKeyOf(resources), TOKEN_SIGNING_KEY),
    settings: resources.settings.auth.challenge,
  });
};
