// The administrator's side of the gateways: which providers take orders now, the masked settings with the
// notify URLs to give each channel, and validated saves that every container picks up (hot reload: at once
// in the container that saved, within SETTINGS_STALENESS_MS in the others).
import { log } from '#lib/platform/log.ts';
import { type GatewaySource, validateSettings } from './registry.ts';
import { CHANNELS, maskSettings, mergeSettings, type SettingsPatch } from './settings.ts';
import type { PaymentSettingsStore } from './settings-store.ts';

export interface GatewaySettingsDeps {
  store: PaymentSettingsStore;
  gateways: GatewaySource;
  stage: string;
  /** `payment.notify_base_url ?? base_url`, without a trailing slash. */
  notifyBaseUrl: string;
}

export class GatewaySettings {
  constructor(private readonly deps: GatewaySettingsDeps) {}

  async listGateways(): Promise<string[]> {
    return (await this.deps.gateways.current()).registry.providers;
  }

  /** As stored now, not as this container holds them: the administrator edits what is really there. */
  async readSettings() {
    const live = await this.deps.gateways.fresh();
    return { ...maskSettings(live.settings), notify_urls: this.notifyUrls() };
  }

  /** Merge, validate the whole result, then store: a bad value changes nothing (400 naming the field). */
  async updateSettings(patch: SettingsPatch) {
    const live = await this.deps.gateways.fresh();
    const next = mergeSettings(live.settings, patch);
    validateSettings(next, this.deps.stage);
    const saved = await this.deps.store.save(next, live.version).catch((error: unknown) => {
      // Another container saved first: what this one holds is behind.
      this.deps.gateways.forget();
      throw error;
    });
    this.deps.gateways.replace(saved);
    log.info('payment settings saved', { version: saved.version });
    return { ...maskSettings(saved.settings), notify_urls: this.notifyUrls() };
  }

  private notifyUrls() {
    return Object.fromEntries(CHANNELS.map((name) => [name, notifyUrl(this.deps.notifyBaseUrl, name)]));
  }
}

/** Where a channel posts its payment notices for `provider` (docs/PAYMENTS-GUIDE.md, "Notify URLs"). */
export function notifyUrl(notifyBaseUrl: string, provider: string): string {
  return `${notifyBaseUrl}/api/v1/payments/${provider}/callback`;
}
