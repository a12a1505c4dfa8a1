// Payment settings as values (docs/SPEC.md 2.4, docs/DESIGN.md 7): their shape, the config-file seed, the
// masked read, the partial write and its validation. Storing them sealed is settings-store.ts.

import { ChannelConfigError } from '#lib/billing/channels/errors.ts';
import { loadPrivateKey, loadPublicKey } from '#lib/billing/channels/keys.ts';
import { optionalHttpUrl } from '#lib/billing/channels/settings.ts';
import { errors } from '#lib/core/errors.ts';
import type { AppConfig, Provider } from '#lib/platform/config/index.ts';

export type ChannelName = 'channel_a' | 'channel_b' | 'channel_c';
export const CHANNELS: readonly ChannelName[] = ['channel_a', 'channel_b', 'channel_c'];

/** Fields stored sealed and shown only as `<field>_set` (docs/DESIGN.md 7). */
export const SECRET_FIELDS = {
  channel_a: ['private_key', 'public_key'],
  channel_b: ['private_key', 'api_v3_key', 'platform_public_key'],
  channel_c: ['key'],
} as const satisfies Record<ChannelName, readonly string[]>;

export const PLAIN_FIELDS = {
  channel_a: ['app_id', 'seller_id', 'gateway_url'],
  channel_b: ['app_id', 'mch_id', 'serial_no', 'platform_serial_no', 'api_base_url'],
  channel_c: ['pid', 'gateway_url', 'api_url', 'submit_url', 'pay_type'],
} as const satisfies Record<ChannelName, readonly string[]>;

/** A channel's section: whether it is on, and every plain or secret field that is set. */
export type ChannelSection<Name extends ChannelName> = { enabled: boolean } & {
  [Field in (typeof PLAIN_FIELDS)[Name][number] | (typeof SECRET_FIELDS)[Name][number]]?: string;
};

export interface PaymentSettings {
  default_gateway: Provider;
  mock: { enabled: boolean };
  channel_a: ChannelSection<'channel_a'>;
  channel_b: ChannelSection<'channel_b'>;
  channel_c: ChannelSection<'channel_c'>;
}

/** Where the settings live (the store, settings-store.ts): values with sealed secrets, and the version alone. */
export const SETTINGS_KEY = { pk: 'settings#payment', sk: 'settings' };
export const SETTINGS_VERSION_KEY = { pk: 'settings#payment', sk: 'version' };

/** Where a channel is reached: changing one redirects the merchant's keys and its payers (docs/PAYMENTS-GUIDE.md). */
export const URL_FIELDS: ReadonlySet<string> = new Set([
  'gateway_url',
  'api_base_url',
  'api_url',
  'submit_url',
]);

function compact<T extends object>(section: T): T {
  return Object.fromEntries(
    Object.entries(section).filter(([, value]) => value !== undefined && value !== ''),
  ) as T;
}

/** The config file's payment section, as it is written to the table on first start (docs/SPEC.md 2.4 rule 3). */
export function settingsFromConfig(payment: AppConfig['payment']): PaymentSettings {
  return {
    default_gateway: payment.default_gateway,
    mock: { enabled: payment.mock.enabled },
    channel_a: compact({ ...payment.channel_a }),
    channel_b: compact({ ...payment.channel_b }),
    channel_c: compact({ ...payment.channel_c }),
  };
}

// ---- masked view ---------------------------------------------------------------------------------

export function maskSettings(settings: PaymentSettings) {
  const section = (name: ChannelName) => {
    const source = settings[name] as unknown as Record<string, string | boolean | undefined>;
    const out: Record<string, unknown> = { enabled: source.enabled === true };
    for (const field of PLAIN_FIELDS[name]) out[field] = source[field] ?? null;
    for (const field of SECRET_FIELDS[name]) out[`${field}_set`] = typeof source[field] === 'string';
    return out;
  };
  return {
    default_gateway: settings.default_gateway,
    mock: { enabled: settings.mock.enabled },
    channel_a: section('channel_a'),
    channel_b: section('channel_b'),
    channel_c: section('channel_c'),
  };
}

// ---- partial update ------------------------------------------------------------------------------

/** A channel's section in a patch: `enabled`, and each field a string to set or null to clear. */
type SectionPatch<Name extends ChannelName> = { enabled?: boolean } & {
  [Field in (typeof PLAIN_FIELDS)[Name][number] | (typeof SECRET_FIELDS)[Name][number]]?: string | null;
};

/** PUT /api/v1/admin/payment: any subset of the GET shape, secrets under their own names. */
export interface SettingsPatch {
  default_gateway?: Provider;
  mock?: { enabled?: boolean };
  channel_a?: SectionPatch<'channel_a'>;
  channel_b?: SectionPatch<'channel_b'>;
  channel_c?: SectionPatch<'channel_c'>;
  /** The acting administrator's password: required when a key or a gateway URL changes (gateway-settings.ts). */
  current_password?: string;
}

/**
 * Applies a patch. Plain fields: a string sets, `''` or null clears, absent keeps. Secrets: a non-empty
 * string replaces; empty, null or absent keeps the stored value (docs/SPEC.md 4.3, docs/DESIGN.md 7).
 */
export function mergeSettings(current: PaymentSettings, patch: SettingsPatch): PaymentSettings {
  const next: PaymentSettings = structuredClone(current);
  if (patch.default_gateway) next.default_gateway = patch.default_gateway;
  if (patch.mock?.enabled !== undefined) next.mock.enabled = patch.mock.enabled;
  for (const name of CHANNELS) {
    const changes = patch[name] as Record<string, string | boolean | null | undefined> | undefined;
    if (!changes) continue;
    const target = next[name] as unknown as Record<string, string | boolean | undefined>;
    if (typeof changes.enabled === 'boolean') target.enabled = changes.enabled;
    for (const field of PLAIN_FIELDS[name]) {
      const value = changes[field];
      if (value === undefined) continue;
      const trimmed = typeof value === 'string' ? value.trim() : '';
      if (trimmed === '') delete target[field];
      else target[field] = trimmed;
    }
    for (const field of SECRET_FIELDS[name]) {
      const value = changes[field];
      // The APIv3 key and the MD5 key are used byte for byte; keys in PEM are trimmed by the key loader.
      if (typeof value === 'string' && value.trim() !== '') target[field] = value;
    }
  }
  return next;
}

/**
 * What only a re-entered password may change (`channel_c.gateway_url`, `channel_b.api_v3_key`,
 * `mock.enabled`): every key the patch sets, even to its stored value (answering otherwise would tell a
 * stolen session whether its guess is the stored key), every gateway URL whose value differs, and the mock
 * cashier switched on (buyers then pay nothing) or off.
 */
export function sensitiveChanges(current: PaymentSettings, patch: SettingsPatch, next: PaymentSettings) {
  const keys: string[] = [];
  const urls: string[] = [];
  for (const name of CHANNELS) {
    const before = current[name] as unknown as Record<string, string | boolean | undefined>;
    const after = next[name] as unknown as Record<string, string | boolean | undefined>;
    const sent = (patch[name] ?? {}) as Record<string, unknown>;
    for (const field of SECRET_FIELDS[name]) {
      const value = sent[field];
      if (typeof value === 'string' && value.trim() !== '') keys.push(`${name}.${field}`);
    }
    for (const field of PLAIN_FIELDS[name]) {
      if (URL_FIELDS.has(field) && before[field] !== after[field]) urls.push(`${name}.${field}`);
    }
  }
  return { keys, urls, switches: current.mock.enabled === next.mock.enabled ? [] : ['mock.enabled'] };
}

// ---- validation ----------------------------------------------------------------------------------

/** `apiV3Key` -> `api_v3_key`: adapters name settings in camelCase, the interface in snake_case. */
export function snakeField(field: string): string {
  return field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * An adapter's ChannelConfigError restated under the name the settings interface uses for the field
 * (`apiV3Key` of channel_b -> `channel_b.api_v3_key`): the 400 an administrator sees.
 */
export function inChannelSettings(channel: ChannelName, error: ChannelConfigError): ChannelConfigError {
  return new ChannelConfigError(`${channel}.${snakeField(error.field)}`, error.problem || 'is invalid');
}

/**
 * Format checks on every value that is set, enabled or not: keys parse, the APIv3 key is 32 bytes, URLs
 * are http(s) (https only in production). Completeness of enabled channels is checked by building their adapters (registry.ts).
 */
export function checkSettingFormats(settings: PaymentSettings, production: boolean): void {
  if (settings.mock.enabled && production) {
    throw errors.validation([
      { field: 'mock.enabled', message: 'the mock cashier cannot be enabled in production' },
    ]);
  }
  for (const name of CHANNELS) {
    const section = settings[name] as unknown as Record<string, string | boolean | undefined>;
    try {
      for (const [field, value] of Object.entries(section)) {
        if (typeof value !== 'string') continue;
        if (URL_FIELDS.has(field)) {
          optionalHttpUrl(field, value);
          // In production a plain-http gateway would carry keys and payment answers readable on the way.
          if (production && new URL(value.trim()).protocol !== 'https:') {
            throw new ChannelConfigError(field, 'must be an https URL in production');
          }
        }
        if (field === 'private_key') loadPrivateKey(field, value);
        if (field === 'public_key' || field === 'platform_public_key') loadPublicKey(field, value);
        if (field === 'api_v3_key' && Buffer.byteLength(value, 'utf8') !== 32) {
          throw new ChannelConfigError(field, 'must be exactly 32 bytes');
        }
      }
    } catch (error) {
      if (error instanceof ChannelConfigError) throw inChannelSettings(name, error);
      throw error;
    }
  }
}
