// The payments function's dependencies, built once per container from its needs and settings.

import { buildSessions } from '#lib/accounts/build-sessions.ts';
import { buildPaymentService } from '#lib/billing/build.ts';
import type { PaymentService } from '#lib/billing/service.ts';
import { buildQuota } from '#lib/files/quota-service.ts';
import { createAuthenticator } from '#lib/http/authenticate.ts';
import type { Authenticator } from '#lib/http/handler.ts';
import { config } from '#lib/platform/config/index.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { tableOf } from '#lib/wiring/table.ts';
import { needs } from './needs.ts';

export interface PaymentsDeps {
  payments: PaymentService;
  authenticate: Authenticator;
}

export function buildPaymentsDeps(resources: GroupResources): PaymentsDeps {
  const { settings } = resources;
  const table = tableOf(resources);
  const masterKey = masterKeyOf(resources);
  const { signer, sessions } = buildSessions({ table, masterKey, ttlHours: settings.auth.session_ttl_hours });
  return {
    payments: buildPaymentService({
      table,
      masterKey,
      signer,
      // Settlement writes the storage grant a plan buys.
      quota: buildQuota({ table, defaultQuotaBytes: settings.upload.default_quota_bytes }),
      settings,
    }),
    authenticate: createAuthenticator({ sessions }),
  };
}

let deps: PaymentsDeps | undefined;

export function paymentsDeps(): PaymentsDeps {
  deps ??= buildPaymentsDeps(groupResources('payments', needs, config));
  return deps;
}
