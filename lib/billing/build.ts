// Builds the payment service from what it uses (table, master key, signer, quota, settings);
// production (functions/payments|payment-callback/deps.ts) and tests call the same builder.
import type { TokenSigner } from '#lib/accounts/tokens.ts';
import type { QuotaService } from '#lib/files/quota-service.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import { CashierLinks } from './cashier.ts';
import { GatewaySource } from './registry.ts';
import { PaymentService } from './service.ts';
import { PaymentSettingsStore, settingsFromConfig } from './settings.ts';

export interface PaymentServiceInput {
  table: Table;
  masterKey: () => Promise<MasterKey>;
  /** Signs the mock cashier's links. */
  signer: TokenSigner;
  /** Settlement writes the storage grant a plan buys (lib/files buildQuota). */
  quota: QuotaService;
  settings: Pick<AppConfig, 'stage' | 'base_url' | 'payment'>;
  clock?: Clock;
}

export function buildPaymentService(input: PaymentServiceInput): PaymentService {
  const { table, settings } = input;
  // Config-file credentials seed the table on first start only (docs/SPEC.md 2.4 rules 2-3).
  const store = new PaymentSettingsStore(table, input.masterKey, () => settingsFromConfig(settings.payment));
  return new PaymentService({
    table,
    store,
    gateways: new GatewaySource(store, settings.stage),
    cashier: new CashierLinks(input.signer, settings.base_url),
    quota: input.quota,
    stage: settings.stage,
    orderTtlMinutes: settings.payment.order_ttl_minutes,
    notifyBaseUrl: (settings.payment.notify_base_url ?? settings.base_url).replace(/\/+$/, ''),
    returnUrl: `${settings.base_url}/`,
    ...(input.clock ? { clock: input.clock } : {}),
  });
}
