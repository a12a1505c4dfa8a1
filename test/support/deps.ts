// One place tests build the service from: the same lib builders production's functions/<group>/deps.ts
// call, over this test file's table, bucket and data folder, with the clock, mailer, storage, limits or
// publisher a test wants to replace. A test cannot wire something production lacks.
import { createAuthHandler } from '#functions/auth/handler.ts';
import { createFilesHandler } from '#functions/files/handler.ts';
import { createPaymentCallbackHandler } from '#functions/payment-callback/handler.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { createUploadHandler } from '#functions/upload/handler.ts';
import { buildAccounts } from '#lib/accounts/build.ts';
import { buildSessions } from '#lib/accounts/build-sessions.ts';
import type { AccountLimits } from '#lib/accounts/limits.ts';
import { buildBilling } from '#lib/billing/build.ts';
import { logPublisher, type OrderEventPublisher } from '#lib/billing/order-events.ts';
import { buildFiles } from '#lib/files/build.ts';
import { buildQuota } from '#lib/files/quota-service.ts';
import { FileStorage } from '#lib/files/storage.ts';
import { usageReader } from '#lib/files/usage-reader.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import { type AppConfig, config } from '#lib/platform/config/index.ts';
import { cachedMasterKey, type MasterKey, openMasterKey } from '#lib/platform/crypto/index.ts';
import { type Clock, Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { memoryMailer } from './mail.ts';
import { drainOutbox, testDrainHandler } from './outbox.ts';

export interface TestDepsOptions {
  clock?: Clock;
  mailer?: Mailer;
  storage?: FileStorage;
  limits?: Partial<AccountLimits>;
  /** Where the outbox drain publishes order.paid (default: the log, as locally without a bus). */
  events?: OrderEventPublisher;
  bootstrap?: AppConfig['admin']['bootstrap'];
  /** The static upload token (default: the test config's `upload.api_token`). */
  staticUploadToken?: string;
  /** `upload.default_quota_bytes` (default: the test config's). */
  defaultQuotaBytes?: number;
  /** `upload.strip_metadata` (default: the test config's). */
  stripMetadata?: boolean;
  /** The CDN invalidator deletes call (default: none, as locally); a recording fake shows what was called. */
  cdn?: Invalidator;
}

// One master key per test file, as one container has one: the local key in the file's data folder.
const testMasterKey = cachedMasterKey(() => openMasterKey(config));

export function sharedMasterKey(): () => Promise<MasterKey> {
  return testMasterKey;
}

/** This file's table (its own name from setup-env) on the given clock. */
export function testTable(clock?: Clock): Table {
  return new Table(dynamoClient(config.aws), config.table_name, clock);
}

export function testStorage(): FileStorage {
  return new FileStorage(s3Client(config.aws), config.bucket_name);
}

export function testDeps(options: TestDepsOptions = {}) {
  const settings = config;
  const table = testTable(options.clock);
  const masterKey = testMasterKey;
  const storage = options.storage ?? testStorage();
  const mail = (options.mailer as ReturnType<typeof memoryMailer> | undefined) ?? memoryMailer();
  const { signer, sessions } = buildSessions({ table, masterKey, ttlHours: settings.auth.session_ttl_hours });
  const accounts = buildAccounts({
    table,
    mailer: mail,
    masterKey,
    sessions,
    signer,
    limits: { ipPerMinute: 0, ...options.limits },
    totpIssuer: settings.auth.totp_issuer,
    usage: usageReader({
      table,
      defaultQuotaBytes: options.defaultQuotaBytes ?? settings.upload.default_quota_bytes,
    }),
  });
  const quota = buildQuota({
    table,
    defaultQuotaBytes: options.defaultQuotaBytes ?? settings.upload.default_quota_bytes,
  });
  const uploads = buildFiles({
    table,
    storage,
    baseUrl: settings.base_url,
    limits: {
      maxBytes: settings.upload.max_bytes,
      presignMaxBytes: settings.upload.presign_max_bytes,
      allowedTypes: settings.upload.allowed_types,
      stripMetadata: options.stripMetadata ?? settings.upload.strip_metadata,
    },
    quota,
    ...(options.cdn ? { cdn: options.cdn } : {}),
  });
  const events = options.events ?? logPublisher;
  const outboxDrain = testDrainHandler(events, options.clock);
  const billing = buildBilling({
    table,
    masterKey,
    signer,
    quota,
    stage: settings.stage,
    baseUrl: settings.base_url,
    payment: settings.payment,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const sessionAuth = createAuthenticator({ sessions });
  const staticToken = options.staticUploadToken ?? settings.upload.api_token;
  const uploaderAuth = createAuthenticator({
    sessions,
    apiTokens: uploads.tokens,
    ...(staticToken ? { staticToken: { token: staticToken, owner: uploads.staticTokenOwner } } : {}),
  });
  const bootstrap = options.bootstrap ?? {};
  const handlers = {
    auth: createAuthHandler(() => ({ accounts, authenticate: sessionAuth, bootstrap })),
    upload: createUploadHandler(() => ({ services: uploads, authenticate: uploaderAuth }), {
      maxUploadBytes: settings.upload.max_bytes,
    }),
    files: createFilesHandler(() => ({ storage })),
    payments: createPaymentsHandler(() => ({ ...billing, authenticate: sessionAuth })),
    paymentCallback: createPaymentCallbackHandler(() => billing),
    outboxDrain,
  };
  return {
    settings,
    table,
    masterKey,
    storage,
    signer,
    sessions,
    accounts,
    mail,
    uploads,
    billing,
    quota,
    handlers,
    /** Delivers the order.paid events settled so far through this drain (test/support/outbox.ts). */
    drainOutbox: () => drainOutbox(outboxDrain),
  };
}

export type TestDeps = ReturnType<typeof testDeps>;
