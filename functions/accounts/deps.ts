// The accounts function's dependencies, built once per container from its needs and settings.

import type { AuditLog } from '#lib/accounts/audit-log.ts';
import { type Accounts, buildAccounts } from '#lib/accounts/build.ts';
import type { AccountLimits } from '#lib/accounts/limits.ts';
import type { SessionService } from '#lib/accounts/sessions.ts';
import type { TokenSigner } from '#lib/accounts/tokens.ts';
import type { RelyingParty } from '#lib/accounts/webauthn.ts';
import { usageReader } from '#lib/files/usage-reader.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import type { Authenticator } from '#lib/http/handler.ts';
import { config } from '#lib/platform/config/index.ts';
import { type AppConfig, adminSecondFactorRequired } from '#lib/platform/config/schema.ts';
import type { SiteStore } from '#lib/platform/site/site.ts';
import { buildBandwidthUsage } from '#lib/wiring/bandwidth.ts';
import { bansOf, type GroupBans } from '#lib/wiring/bans.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { providerSecretsOf } from '#lib/wiring/provider-secrets.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { auditLogOf, proofOfWorkOf, quotaOf, sessionsOf } from '#lib/wiring/shared.ts';
import { siteOf } from '#lib/wiring/site.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface AccountsDeps {
  accounts: Accounts;
  authenticate: Authenticator;
  /** Where administrators' actions are recorded (lib/http/admin-audit.ts). */
  audit: AuditLog;
  /** Address bans (docs/ABUSE.md "Bans"): the back office's routes and the check of every request. */
  bans: GroupBans;
  /** `admin.bootstrap`: the first administrator, created once before the first request. */
  bootstrap: AppConfig['admin']['bootstrap'];
  /** Not used by the routes; what the accounts were built over, for tests that issue or check sessions. */
  sessions: SessionService;
  signer: TokenSigner;
  /** The operator's site (docs/DEPLOYMENT.md "Branding"). */
  site: SiteStore;
}

/** What is not a setting: the account domain's limits (lib/accounts/limits.ts); production passes none. */
export interface AccountsOverrides {
  limits?: Partial<AccountLimits>;
}

export function buildAccountsDeps(
  resources: GroupResources,
  overrides: AccountsOverrides = {},
): AccountsDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const masterKey = masterKeyOf(resources);
  const shared = sessionsOf(resources);
  const accounts = buildAccounts({
    table,
    mailer: mailerOf(resources),
    masterKey,
    shared,
    limits: { ipPerMinute: settings.auth.ip_limit_per_minute, ...overrides.limits },
    totpIssuer: settings.auth.totp_issuer,
    baseUrl: settings.base_url,
    relyingParty: relyingPartyOf(settings),
    proofOfWork: proofOfWorkOf(resources),
    signIn: { providers: settings.auth.providers, secretOf: providerSecretsOf(resources) },
    // The back office lists each account's storage use (docs/DESIGN.md 11) and bytes served this month.
    usage: usageReader(
      quotaOf(resources),
      buildBandwidthUsage({
        table,
        defaultQuotaBytes: settings.upload.default_quota_bytes,
        defaultBytes: settings.bandwidth.default_bytes,
      }),
    ),
  });
  return {
    accounts,
    authenticate: createAuthenticator({
      sessions: shared.sessions,
      requireAdminSecondFactor: adminSecondFactorRequired(settings),
    }),
    audit: auditLogOf(resources),
    bans: bansOf(resources),
    bootstrap: settings.admin.bootstrap,
    sessions: shared.sessions,
    signer: shared.signer,
    site: siteOf(resources),
  };
}

/**
 * The relying party of passkeys (docs/DESIGN.md 18): `auth.passkeys.rp_id`, else the host of `base_url`;
 * origins `base_url`'s and any `auth.passkeys.origins`.
 */
export function relyingPartyOf(settings: AppConfig): RelyingParty {
  const base = new URL(settings.base_url);
  return {
    id: settings.auth.passkeys.rp_id ?? base.hostname,
    name: settings.auth.totp_issuer,
    origins: [...new Set([base.origin, ...settings.auth.passkeys.origins])],
  };
}

let deps: AccountsDeps | undefined;

export function accountsDeps(): AccountsDeps {
  deps ??= buildAccountsDeps(groupResources('accounts', needs, config));
  return deps;
}
