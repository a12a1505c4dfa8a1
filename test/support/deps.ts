// One place tests build the service from: each group's dependencies come from its production builder
// (functions/<group>/deps.ts) over this test file's settings and resources, with the clock, mailer, storage,
// CDN, publisher, settings or limits a test replaces. A test cannot wire something production lacks.
import { buildAccountsDeps } from '#functions/accounts/deps.ts';
import { createAccountsHandler } from '#functions/accounts/handler.ts';
import { needs as accountsNeeds } from '#functions/accounts/needs.ts';
import { buildBandwidthDeps } from '#functions/bandwidth/deps.ts';
import { createBandwidthHandler } from '#functions/bandwidth/handler.ts';
import { needs as bandwidthNeeds } from '#functions/bandwidth/needs.ts';
import { buildFilesDeps } from '#functions/files/deps.ts';
import { createFilesHandler } from '#functions/files/handler.ts';
import { needs as filesNeeds } from '#functions/files/needs.ts';
import { createMetaHandler } from '#functions/meta/handler.ts';
import { buildModerationDeps } from '#functions/moderation/deps.ts';
import { createModerationHandler } from '#functions/moderation/handler.ts';
import { needs as moderationNeeds } from '#functions/moderation/needs.ts';
import { buildOutboxDrainDeps } from '#functions/outbox-drain/deps.ts';
import { createOutboxDrainHandler } from '#functions/outbox-drain/handler.ts';
import { needs as outboxDrainNeeds } from '#functions/outbox-drain/needs.ts';
import { buildPaymentCallbackDeps } from '#functions/payment-callback/deps.ts';
import { createPaymentCallbackHandler } from '#functions/payment-callback/handler.ts';
import { needs as paymentCallbackNeeds } from '#functions/payment-callback/needs.ts';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs as paymentsNeeds } from '#functions/payments/needs.ts';
import { buildReconcilerDeps } from '#functions/reconciler/deps.ts';
import { createReconcilerHandler } from '#functions/reconciler/handler.ts';
import { needs as reconcilerNeeds } from '#functions/reconciler/needs.ts';
import { buildRenderDeps } from '#functions/render/deps.ts';
import { createRenderHandler } from '#functions/render/handler.ts';
import { needs as renderNeeds } from '#functions/render/needs.ts';
import { buildSharesDeps } from '#functions/shares/deps.ts';
import { createSharesHandler } from '#functions/shares/handler.ts';
import { needs as sharesNeeds } from '#functions/shares/needs.ts';
import { buildTakedownsDeps } from '#functions/takedowns/deps.ts';
import { createTakedownsHandler } from '#functions/takedowns/handler.ts';
import { needs as takedownsNeeds } from '#functions/takedowns/needs.ts';
import type { AccountLimits } from '#lib/accounts/limits.ts';
import type { OrderEventPublisher } from '#lib/billing/order-events.ts';
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import type { GroupNeeds } from '#lib/wiring/needs.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { memoryMailer } from './mail.ts';
import { drainOutbox } from './outbox.ts';
import { sharedMasterKey, type TestSettingsOverrides, testResources, testSettings } from './resources.ts';

export { sharedMasterKey, testSettings, testTable } from './resources.ts';

export interface TestDepsOptions extends TestSettingsOverrides {
  clock?: Clock;
  mailer?: Mailer;
  storage?: FileStorage;
  /** The account limits; `ipPerMinute` is the setting `auth.ip_limit_per_minute` (default 0, off). */
  limits?: Partial<AccountLimits>;
  /** Where the outbox drain publishes order.paid (default: the log, as locally without a bus). */
  events?: OrderEventPublisher;
  /** The CDN invalidator the takedowns worker calls (default: none, as locally); a fake records the calls. */
  cdn?: Invalidator;
  /** The edge's deny-list the takedowns worker writes (default: none, as locally); a fake records it. */
  denyList?: EdgeDenyList;
}

/** This file's bucket, as lib/wiring/storage.ts builds it. */
export function testStorage(): FileStorage {
  return storageOf(testResources('test', { bucket: 'readwrite' }));
}

export function testDeps(options: TestDepsOptions = {}) {
  const { ipPerMinute, ...limits } = options.limits ?? {};
  const settings = testSettings({
    ...(options.bootstrap ? { bootstrap: options.bootstrap } : {}),
    ...(options.staticUploadToken ? { staticUploadToken: options.staticUploadToken } : {}),
    ...(options.defaultQuotaBytes !== undefined ? { defaultQuotaBytes: options.defaultQuotaBytes } : {}),
    ...(options.stripMetadata !== undefined ? { stripMetadata: options.stripMetadata } : {}),
    ...(options.bandwidthDefaultBytes !== undefined
      ? { bandwidthDefaultBytes: options.bandwidthDefaultBytes }
      : {}),
    ...(ipPerMinute !== undefined ? { ipLimitPerMinute: ipPerMinute } : {}),
    ...(options.moderation ? { moderation: options.moderation } : {}),
    ...(options.requireAdminSecondFactor === undefined
      ? {}
      : { requireAdminSecondFactor: options.requireAdminSecondFactor }),
    ...(options.uploadRate ? { uploadRate: options.uploadRate } : {}),
    ...(options.uploadRateByPlan ? { uploadRateByPlan: options.uploadRateByPlan } : {}),
    ...(options.challenge ? { challenge: options.challenge } : {}),
    ...(options.signInProviders ? { signInProviders: options.signInProviders } : {}),
  });
  const mail = (options.mailer as ReturnType<typeof memoryMailer> | undefined) ?? memoryMailer();
  const resources = (group: string, needs: GroupNeeds) =>
    testResources(group, needs, {
      settings,
      ...(options.clock ? { clock: options.clock } : {}),
      provided: {
        mail,
        ...(options.storage ? { bucket: options.storage } : {}),
        ...(options.cdn ? { cdn: options.cdn } : {}),
        ...(options.denyList ? { denyList: options.denyList } : {}),
        ...(options.events ? { events: options.events } : {}),
      },
    });
  const authResources = resources('accounts', accountsNeeds);
  const uploadResources = resources('files', filesNeeds);
  const groups = {
    accounts: buildAccountsDeps(authResources, { limits }),
    files: buildFilesDeps(uploadResources),
    shares: buildSharesDeps(
      resources('shares', sharesNeeds),
      limits.passwordGuessing ? { guessLimit: limits.passwordGuessing } : {},
    ),
    render: buildRenderDeps(resources('render', renderNeeds)),
    payments: buildPaymentsDeps(resources('payments', paymentsNeeds)),
    paymentCallback: buildPaymentCallbackDeps(resources('payment-callback', paymentCallbackNeeds)),
    reconciler: buildReconcilerDeps(resources('reconciler', reconcilerNeeds)),
    outboxDrain: buildOutboxDrainDeps(resources('outbox-drain', outboxDrainNeeds)),
    takedowns: buildTakedownsDeps(resources('takedowns', takedownsNeeds)),
    bandwidth: buildBandwidthDeps(resources('bandwidth', bandwidthNeeds)),
    moderation: buildModerationDeps(resources('moderation', moderationNeeds)),
  };
  const handlers = {
    accounts: createAccountsHandler(() => groups.accounts),
    files: createFilesHandler(() => groups.files, { maxUploadBytes: settings.upload.max_bytes }),
    meta: createMetaHandler(),
    shares: createSharesHandler(() => groups.shares),
    render: createRenderHandler(() => groups.render),
    payments: createPaymentsHandler(() => groups.payments),
    paymentCallback: createPaymentCallbackHandler(() => groups.paymentCallback),
    reconciler: createReconcilerHandler(() => groups.reconciler),
    outboxDrain: createOutboxDrainHandler(() => groups.outboxDrain),
    takedowns: createTakedownsHandler(() => groups.takedowns),
    bandwidth: createBandwidthHandler(() => groups.bandwidth),
    moderation: createModerationHandler(() => groups.moderation),
  };
  return {
    settings,
    /** Each group's dependencies, as its production builder made them. */
    groups,
    handlers,
    // What tests reach past the handlers, taken from the groups that built it.
    table: tableOf(authResources),
    storage: storageOf(uploadResources),
    masterKey: sharedMasterKey(),
    mail,
    accounts: groups.accounts.accounts,
    sessions: groups.accounts.sessions,
    signer: groups.accounts.signer,
    uploads: groups.files.services,
    quota: groups.files.services.quota,
    billing: groups.payments.billing,
    /** Delivers the order.paid events settled so far through this drain (test/support/outbox.ts). */
    drainOutbox: () => drainOutbox(handlers.outboxDrain),
  };
}

export type TestDeps = ReturnType<typeof testDeps>;
