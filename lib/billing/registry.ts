// Which providers can take orders right now: manual always, mock when enabled (never in production), each
// channel when enabled and complete. Rebuilt when the stored settings change (hot reload), kept per
// container for a stated staleness.

import { createChannelA } from '#lib/billing/channels/channel-a.ts';
import { createChannelB } from '#lib/billing/channels/channel-b.ts';
import { createChannelC } from '#lib/billing/channels/channel-c.ts';
import { ChannelConfigError } from '#lib/billing/channels/errors.ts';
import type { ChannelAdapter } from '#lib/billing/channels/types.ts';
import { type Cached, cached } from '#lib/platform/cache.ts';
import type { Provider } from '#lib/platform/config/index.ts';
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import {
  CHANNELS,
  type ChannelName,
  checkSettingFormats,
  inChannelSettings,
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

export interface GatewayRegistryFacts {
  adapters: ReadonlyMap<ChannelName, ChannelAdapter>;
  registered: ReadonlySet<Provider>;
  /** `default_gateway`: the default when it is registered, else manual. */
  preferredDefault: Provider;
}

/** The channels one version of the settings registers (a value: rebuilt when the settings change). */
export class GatewayRegistry {
  /** Registered providers, the default first, then in the fixed order manual, mock, channel_a|b|c. */
  readonly providers: Provider[];
  readonly defaultProvider: Provider;

  private readonly adapters: ReadonlyMap<ChannelName, ChannelAdapter>;

  constructor({ adapters, registered, preferredDefault }: GatewayRegistryFacts) {
    this.adapters = adapters;
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
  options: { production: boolean; strict?: boolean },
): GatewayRegistry {
  const registered = new Set<Provider>(['manual']);
  if (settings.mock.enabled && !options.production) registered.add('mock');
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
  return new GatewayRegistry({ adapters, registered, preferredDefault: settings.default_gateway });
}

/** PUT validation: every set value well-formed, every enabled channel complete. Throws 400 naming the field. */
export function validateSettings(settings: PaymentSettings, production: boolean): void {
  checkSettingFormats(settings, production);
  buildRegistry(settings, { production, strict: true });
}

export interface LiveGateways extends VersionedSettings {
  registry: GatewayRegistry;
}

/** How stale another container's payment settings may be here (docs/PAYMENTS-GUIDE.md, "Hot reload"). */
export const SETTINGS_STALENESS_MS = 30_000;

/**
 * Per-container view of the settings (docs/PAYMENTS-GUIDE.md, "Hot reload and its cost"): kept for
 * SETTINGS_STALENESS_MS without any read, then revalidated by one read of the stored version (secrets are
 * opened and adapters rebuilt only when it moved). A save in this container is seen by it at once
 * (`replace`); other containers see it within the staleness. A negative answer (a provider not registered
 * here) is checked against the stored version before it is given (`confirmed`), so switching a provider on
 * takes effect at once everywhere; switching one off, within the staleness.
 */
export interface GatewaySourceDeps {
  store: PaymentSettingsStore;
  /** No mock cashier in production (lib/platform/config/schema.ts isProduction). */
  production: boolean;
  clock: Clock;
}

export class GatewaySource {
  private readonly cache: Cached<LiveGateways>;

  constructor(private readonly deps: GatewaySourceDeps) {
    this.cache = cached((previous) => this.revalidate(previous), {
      ttlMs: SETTINGS_STALENESS_MS,
      clock: deps.clock,
    });
  }

  /** The settings and registry as this container holds them (at most SETTINGS_STALENESS_MS old). */
  current(): Promise<LiveGateways> {
    return this.cache.get();
  }

  /** As the table holds them now (one version read): for the administrator's reads and saves. */
  fresh(): Promise<LiveGateways> {
    return this.cache.refresh();
  }

  /**
   * The current registry if `accepts` holds for it; otherwise the registry as the table holds it now, so a
   * provider just switched on in another container is not refused here for the staleness.
   */
  async confirmed(accepts: (registry: GatewayRegistry) => boolean): Promise<LiveGateways> {
    const held = await this.current();
    return accepts(held.registry) ? held : this.fresh();
  }

  /** After this container saved new settings, it need not read them back. */
  replace(saved: VersionedSettings): LiveGateways {
    const live = { ...saved, registry: buildRegistry(saved.settings, { production: this.deps.production }) };
    this.cache.set(live);
    return live;
  }

  /** A save lost to another container's: the next read goes to the table. */
  forget(): void {
    this.cache.invalidate();
  }

  private async revalidate(previous: LiveGateways | undefined): Promise<LiveGateways> {
    if (previous && (await this.deps.store.currentVersion()) === previous.version) return previous;
    const loaded = await this.deps.store.load();
    return { ...loaded, registry: buildRegistry(loaded.settings, { production: this.deps.production }) };
  }
}
