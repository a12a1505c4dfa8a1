// The administrator's side of the gateways: which providers take orders now, the masked settings with the
// notify URLs to give each channel, and validated saves that every container picks up (hot reload: at once
// in the container that saved, within SETTINGS_STALENESS_MS in the others).
import { errors } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import type { PaymentSecurity, SettingsActor } from './payment-security.ts';
import { type GatewaySource, validateSettings } from './registry.ts';
import {
  CHANNELS,
  type ChannelName,
  maskSettings,
  mergeSettings,
  type PaymentSettings,
  type SettingsPatch,
  sensitiveChanges,
} from './settings.ts';
import type { PaymentSettingsStore } from './settings-store.ts';

export interface GatewaySettingsDeps {
  store: PaymentSettingsStore;
  gateways: GatewaySource;
  /** A production deployment: no mock cashier, https gateways only. */
  production: boolean;
  /** `payment.notify_base_url ?? base_url`, without a trailing slash. */
  notifyBaseUrl: string;
  /**
   * Re-authentication and the notices of a gateway change; absent where no route changes settings (the
   * callback and reconciler groups): a key or gateway change is then refused.
   */
  security: PaymentSecurity | undefined;
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

  /**
   * Merge, validate the whole result, then store: a bad value changes nothing (400 naming the field). A
   * change to any key, gateway URL or the mock cashier's switch needs the actor's `current_password` (400
   * naming it), checked after the values, so a typo in a URL does not spend a password attempt; a gateway
   * URL change is then recorded and every administrator told.
   */
  async updateSettings(patch: SettingsPatch, actor: SettingsActor) {
    const live = await this.deps.gateways.fresh();
    const next = mergeSettings(live.settings, patch);
    validateSettings(next, this.deps.production);
    const { keys, urls, switches } = sensitiveChanges(live.settings, patch, next);
    if (keys.length + urls.length + switches.length > 0) {
      if (!this.deps.security)
        throw errors.forbidden('Payment keys, gateways and the mock cashier are not changed here');
      await this.deps.security.requirePassword(actor.account, patch.current_password);
    }
    const saved = await this.deps.store.save(next, live.version).catch((error: unknown) => {
      // Another container saved first: what this one holds is behind.
      this.deps.gateways.forget();
      throw error;
    });
    this.deps.gateways.replace(saved);
    log.info('payment settings saved', { version: saved.version });
    if (urls.length > 0) {
      log.warn('payment gateway address changed', { fields: urls, account_id: actor.account.id });
      await this.deps.security?.gatewayChanged(
        actor,
        urls.map((field) => ({ field, host: hostOf(saved.settings, field) })),
      );
    }
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

/** The origin a `channel.field` URL setting now names (never its path or query), or null when cleared. */
function hostOf(settings: PaymentSettings, path: string): string | null {
  const [channel, field] = path.split('.') as [ChannelName, string];
  const value = (settings[channel] as unknown as Record<string, unknown>)[field];
  if (typeof value !== 'string') return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}
