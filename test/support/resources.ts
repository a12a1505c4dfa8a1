// This test file's settings and group resources: the test config with the settings a test replaces, and
// groupResources over them with what the file's groups share (its one master key, as one container has one).
import { type AppConfig, config } from '#lib/platform/config/index.ts';
import { cachedMasterKey, type MasterKey, openMasterKey } from '#lib/platform/crypto/index.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import type { GroupNeeds } from '#lib/wiring/needs.ts';
import { type GroupResources, groupResources, type ProvidedResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';

/** The settings a test replaces; every other setting is the test config's. */
export interface TestSettingsOverrides {
  /** `admin.bootstrap` (default: none, so no test file gets an administrator it did not ask for). */
  bootstrap?: AppConfig['admin']['bootstrap'];
  /** `upload.api_token`, the static upload token (default: the test config's). */
  staticUploadToken?: string;
  /** `upload.default_quota_bytes` (default: the test config's). */
  defaultQuotaBytes?: number;
  /** `upload.strip_metadata` (default: the test config's). */
  stripMetadata?: boolean;
  /** `auth.ip_limit_per_minute` (default: 0, off, so tests sharing one source address are not throttled). */
  ipLimitPerMinute?: number;
  /** `bandwidth.default_bytes` (default: the test config's, unlimited). */
  bandwidthDefaultBytes?: number;
  /** `moderation.*` replaced (default: the test config's). */
  moderation?: Partial<AppConfig['moderation']>;
  /** `admin.require_second_factor` (default: the test config's, absent: off outside production). */
  requireAdminSecondFactor?: boolean;
  /** `upload.rate.*` replaced and `upload.rate_by_plan` (default: the test config's). */
  uploadRate?: Partial<AppConfig['upload']['rate']>;
  uploadRateByPlan?: AppConfig['upload']['rate_by_plan'];
  /** `auth.challenge.*` replaced (default: the test config's, not required). */
  challenge?: Partial<AppConfig['auth']['challenge']>;
  /** `auth.providers`, the sign-in providers (default: none). */
  signInProviders?: AppConfig['auth']['providers'];
}

/** The test config (this file's table, bucket and data folder) with the given settings replaced. */
export function testSettings(overrides: TestSettingsOverrides = {}): Readonly<AppConfig> {
  const { upload, admin, auth, bandwidth, moderation } = config;
  return {
    ...config,
    moderation: { ...moderation, ...overrides.moderation },
    bandwidth: { ...bandwidth, default_bytes: overrides.bandwidthDefaultBytes ?? bandwidth.default_bytes },
    admin: {
      ...admin,
      bootstrap: overrides.bootstrap ?? {},
      ...(overrides.requireAdminSecondFactor === undefined
        ? {}
        : { require_second_factor: overrides.requireAdminSecondFactor }),
    },
    auth: {
      ...auth,
      ip_limit_per_minute: overrides.ipLimitPerMinute ?? 0,
      challenge: { ...auth.challenge, ...overrides.challenge },
      providers: overrides.signInProviders ?? auth.providers,
    },
    upload: {
      ...upload,
      api_token: overrides.staticUploadToken ?? upload.api_token,
      default_quota_bytes: overrides.defaultQuotaBytes ?? upload.default_quota_bytes,
      strip_metadata: overrides.stripMetadata ?? upload.strip_metadata,
      rate: { ...upload.rate, ...overrides.uploadRate },
      rate_by_plan: overrides.uploadRateByPlan ?? upload.rate_by_plan,
    },
  };
}

// One master key per test file, as one container has one: the local key in the file's data folder. Shared
// by every group a test builds, so no two of them race to create the key file.
const testMasterKey = cachedMasterKey(() => openMasterKey(config));

export function sharedMasterKey(): () => Promise<MasterKey> {
  return testMasterKey;
}

export interface TestResourcesOptions {
  /** Default: the test config (testSettings() for one with settings replaced). */
  settings?: Readonly<AppConfig>;
  clock?: Clock;
  /** Resources the test holds (default: the file's master key); a need the group lacks still throws. */
  provided?: ProvidedResources;
}

/** A group's resources as its container has them, over this test file's settings. */
export function testResources(
  group: string,
  needs: GroupNeeds,
  options: TestResourcesOptions = {},
): GroupResources {
  return groupResources(group, needs, options.settings ?? config, {
    ...(options.clock ? { clock: options.clock } : {}),
    provided: { masterKey: testMasterKey, ...options.provided },
  });
}

/** This file's table (its own name from setup-env) on the given clock, as lib/wiring/table.ts builds it. */
export function testTable(clock?: Clock): Table {
  return tableOf(testResources('test', { table: 'readwrite' }, clock ? { clock } : {}));
}
