// The shares function's dependencies, built once per container from its needs and settings.

import { buildPasswordGuard } from '#lib/accounts/build-sessions.ts';
import type { PasswordGuessLimit } from '#lib/accounts/login-guard.ts';
import type { ProofOfWork } from '#lib/accounts/proof-of-work.ts';
import { buildFileRepository, buildShareGrants } from '#lib/files/build-records.ts';
import { buildRenderer, buildRenditions } from '#lib/files/build-renditions.ts';
import { buildShares } from '#lib/files/build-shares.ts';
import type { Renditions } from '#lib/files/renditions.ts';
import type { ShareService } from '#lib/files/shares.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import type { Authenticator } from '#lib/http/handler.ts';
import { buildReports } from '#lib/moderation/build.ts';
import type { Reports } from '#lib/moderation/reports.ts';
import { config } from '#lib/platform/config/index.ts';
import { adminSecondFactorRequired } from '#lib/platform/config/schema.ts';
import type { SiteStore } from '#lib/platform/site/site.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { proofOfWorkOf, sessionsOf } from '#lib/wiring/shared.ts';
import { siteOf } from '#lib/wiring/site.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface SharesDeps {
  /** Share links (docs/DESIGN.md 16): their passwords are argon2id hashes, like accounts'. */
  shares: ShareService;
  /** Sessions, for the owner's routes. */
  authenticate: Authenticator;
  /** A share's images through its own door: the originals, and their thumbnails as the render group makes them. */
  storage: FileStorage;
  renditions: Renditions;
  /** Reports of a file or a share by anyone (docs/MODERATION.md "Reports"). */
  reports: Reports;
  /** The solved challenge of share passwords and reports (docs/ACCOUNTS.md "Proof of work"). */
  proofOfWork: ProofOfWork;
  /** The operator's site, which brands the share pages (docs/DEPLOYMENT.md "Branding"). */
  site: SiteStore;
}

/** What is not a setting: wrong share passwords before the back-off; production passes none. */
export interface SharesOverrides {
  guessLimit?: PasswordGuessLimit;
}

export function buildSharesDeps(resources: GroupResources, overrides: SharesOverrides = {}): SharesDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const storage = storageOf(resources);
  const { sessions } = sessionsOf(resources);
  return {
    shares: buildShares({
      table,
      masterKey: masterKeyOf(resources),
      baseUrl: settings.base_url,
      listingShards: settings.listing_shards,
      // Wrong share passwords back off as wrong account passwords do.
      accounts: buildPasswordGuard({ table, limit: overrides.guessLimit }),
    }),
    authenticate: createAuthenticator({
      sessions,
      requireAdminSecondFactor: adminSecondFactorRequired(settings),
    }),
    storage,
    proofOfWork: proofOfWorkOf(resources),
    site: siteOf(resources),
    reports: buildReports({
      table,
      files: buildFileRepository({
        table,
        baseUrl: settings.base_url,
        listingShards: settings.listing_shards,
      }),
      grants: buildShareGrants(table, masterKeyOf(resources)),
      shards: settings.listing_shards,
      rate: {
        perMinute: settings.moderation.report_rate.per_minute,
        burst: settings.moderation.report_rate.burst,
        perDay: settings.moderation.report_rate.per_day,
      },
    }),
    renditions: buildRenditions({
      storage,
      table: async () => table,
      images: settings.images,
      renderer: buildRenderer(settings.images),
      // A share shows its thumbnails (a preset) only: nothing signed.
      signingSecrets: async () => [],
    }),
  };
}

let deps: SharesDeps | undefined;

export function sharesDeps(): SharesDeps {
  deps ??= buildSharesDeps(groupResources('shares', needs, config));
  return deps;
}
