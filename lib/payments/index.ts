// This container's payment service, built once from configuration (handlers call paymentService()).
import { tokenSigner } from '../auth/index.ts';
import { config } from '../config/index.ts';
import { masterKey } from '../crypto/index.ts';
import { serviceTable } from '../db/index.ts';
import { orderEventPublisher } from '../events/order-events.ts';
import { CashierLinks } from './cashier.ts';
import { GatewaySource } from './registry.ts';
import { PaymentService } from './service.ts';
import { PaymentSettingsStore, settingsFromConfig } from './settings.ts';

let service: PaymentService | undefined;

export function paymentService(): PaymentService {
  if (!service) {
    const table = serviceTable();
    const store = new PaymentSettingsStore(table, masterKey, () => settingsFromConfig(config.payment));
    service = new PaymentService({
      table,
      store,
      gateways: new GatewaySource(store, config.stage),
      cashier: new CashierLinks(tokenSigner(), config.base_url),
      events: orderEventPublisher(),
      stage: config.stage,
      orderTtlMinutes: config.payment.order_ttl_minutes,
      notifyBaseUrl: (config.payment.notify_base_url ?? config.base_url).replace(/\/+$/, ''),
      returnUrl: `${config.base_url}/`,
    });
  }
  return service;
}

export { PaymentService } from './service.ts';
