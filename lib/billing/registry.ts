// Which providers can take orders right now: manual always, mock when enabled (never in production), each
// channel when enabled and complete. Rebuilt whenever the stored settings change (hot reload).

import { createChannelA } from '#lib/billing/channels/channel-a.ts';
import { createChannelB } from '#lib/billing/channels/channel-b.ts';
import { createChannelC } from '#lib/billing/channels/channel-c.ts';
import { ChannelConfigError } from '#lib/billing/channels/errors.ts';
import type { ChannelAdapter } from '#lib/billing/channels/types.ts';
import type { Provider } from '#lib/platform/config/index.ts';
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import { log } from '#lib/platform/log.ts';
import {
  CHANNELS,
  type ChannelName,
  checkSettingFormats,
  inChannelSettings,
  isProductionStage,
  type PaymentSettings,
} from './settings.ts';
import type { PaymentSettingsStore, VersionedSettings } from './settings-store.ts';

export function isChannel(provider: string): provider is ChannelName {
  return (CHANNELS as readonly string[]).includes(provider);
}

/** Builds a channel's adapter; throws ChannelConfigError naming the (camelCase) setting at fault. */
export function createAdapter(name: ChannelName, settings: PaymentSettings): ChannelAdapter {
  switch (name) {
    case 'channel_a': {
      const a = settings.channel_a;
      return createChannelA({
        appId: a.app_id ?? '',
        privateKey: a.private_key ?? '',
        publicKey: a.public_key ?? '',
        ...(a.seller_id ? { sellerId: a.seller_id } : {}),
        ...(a.gateway_url ? { gatewayUrl: a.gateway_url } : {}),
      });
    }
    case 'channel_b': {
      const b = settings.channel_b;
      return createChannelB({
        appId: b.app_id ?? '',
        mchId: b.mch_id ?? '',
        serialNo: b.serial_no ?? '',
        privateKey: b.private_key ?? '',
        apiV3Key: b.api_v3_key ?? '',
        platformPublicKey: b.platform_public_key,
        ...(b.platform_serial_no ? { platformSerialNo: b.platform_serial_no } : {}),
        ...(b.api_base_url ? { apiBaseUrl: b.api_base_url } : {}),
      });
    }
    case 'channel_c': {
      const c = settings.channel_c;
      return createChannelC({
        pid: c.pid ?? '',
        key: c.key ?? '',
        gatewayUrl: c.gateway_url ?? '',
        ...(c.api_url ? { apiUrl: c.api_url } : {}),
        ...(c.submit_url ? { submitUrl: c.submit_url } : {}),
        ...(c.pay_type ? { payType: c.pay_type } : {}),
      });
    }
  }
}

export class GatewayRegistry {
  /** Registered providers, the default first, then in the fixed order manual, mock, channel_a|b|c. */
  readonly providers: Provider[];
  readonly defaultProvider: Provider;

  constructor(
    private readonly adapters: ReadonlyMap<ChannelName, ChannelAdapter>,
    registered: ReadonlySet<Provider>,
    preferredDefault: Provider,
  ) {
    // payment.default_gateway falls back to manual when it is not registered (docs/DESIGN.md 7).
    this.defaultProvider = registered.has(preferredDefault) ? preferredDefault : 'manual';
    this.providers = [
      this.defaultProvider,
      ...PROVIDERS.filter((name) => name !== this.defaultProvider && registered.has(name)),
    ];
  }

  has(provider: string): provider is Provider {
    return (this.providers as string[]).includes(provider);
  }

  channel(provider: ChannelName): ChannelAdapter | undefined {
    return this.adapters.get(provider);
  }
}

/**
 * The registry for these settings. A channel whose settings are incomplete or broken is left out (with a
 * warning naming the setting) unless `strict`, where it is a 400 naming the setting (the PUT path).
 */
export function buildRegistry(
  settings: PaymentSettings,
  options: { stage: string; strict?: boolean },
): GatewayRegistry {
  const registered = new Set<Provider>(['manual']);
  if (settings.mock.enabled && !isProductionStage(options.stage)) registered.add('mock');
  const adapters = new Map<ChannelName, ChannelAdapter>();
  for (const name of CHANNELS) {
    if (!settings[name].enabled) continue;
    try {
      adapters.set(name, createAdapter(name, settings));
      registered.add(name);
    } catch (error) {
      if (!(error instanceof ChannelConfigError)) throw error;
      if (options.strict) throw inChannelSettings(name, error);
      log.warn('payment channel enabled but not registered', { channel: name, problem: error.message });
    }
  }
  return new GatewayRegistry(adapters, registered, settings.default_gateway);
}

/** PUT validation: every set value well-formed, every enabled channel complete. Throws 400 naming the field. */
export function validateSettings(settings: PaymentSettings, stage: string): void {
  checkSettingFormats(settings, stage);
  buildRegistry(settings, { stage, strict: true });
}

export interface LiveGateways extends VersionedSettings {
  registry: GatewayRegistry;
}

/**
 * Per-container view of the settings that takes saved changes on the next request in every function: each
 * call reads only the stored version (one small GetItem); secrets are opened and adapters rebuilt only
 * when that version moved.
 */
export class GatewaySource {
  private live: Promise<LiveGateways> | undefined;

  constructor(
    private readonly store: PaymentSettingsStore,
    private readonly stage: string,
  ) {}

  async current(): Promise<LiveGateways> {
    const cached = this.live ? await this.live.catch(() => undefined) : undefined;
    if (cached) {
      const version = await this.store.currentVersion();
      if (version === cached.version) return cached;
    }
    const loading = this.store.load().then((loaded) => ({
      ...loaded,
      registry: buildRegistry(loaded.settings, { stage: this.stage }),
    }));
    this.live = loading;
    return loading;
  }

  /** After this container saved new settings, it need not read them back. */
  replace(saved: VersionedSettings): LiveGateways {
    const live = { ...saved, registry: buildRegistry(saved.settings, { stage: this.stage }) };
    this.live = Promise.resolve(live);
    return live;
  }
}
