// Payment settings (docs/SPEC.md 2.4, docs/DESIGN.md 7): one versioned item in the table, every secret sealed with
// the master key, config-file values written there on first start, masked reads, validated partial writes.

import { ChannelConfigError } from '#lib/billing/channels/errors.ts';
import { loadPrivateKey, loadPublicKey } from '#lib/billing/channels/keys.ts';
import { optionalHttpUrl } from '#lib/billing/channels/settings.ts';
import { errors } from '#lib/core/errors.ts';
import type { AppConfig, Provider } from '#lib/platform/config/index.ts';
import { PROVIDERS } from '#lib/platform/config/schema.ts';
import type { MasterKey } from '#lib/platform/crypto/index.ts';
import { ConditionFailedError, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import * as z from '#lib/platform/zod.ts';

export interface ChannelASection {
  enabled: boolean;
  app_id?: string;
  seller_id?: string;
  gateway_url?: string;
  private_key?: string;
  public_key?: string;
}

export interface ChannelBSection {
  enabled: boolean;
  app_id?: string;
  mch_id?: string;
  serial_no?: string;
  platform_serial_no?: string;
  api_base_url?: string;
  private_key?: string;
  api_v3_key?: string;
  platform_public_key?: string;
}

export interface ChannelCSection {
  enabled: boolean;
  pid?: string;
  gateway_url?: string;
  api_url?: string;
  submit_url?: string;
  pay_type?: string;
  key?: string;
}

export interface PaymentSettings {
  default_gateway: Provider;
  mock: { enabled: boolean };
  channel_a: ChannelASection;
  channel_b: ChannelBSection;
  channel_c: ChannelCSection;
}

export type ChannelName = 'channel_a' | 'channel_b' | 'channel_c';
export const CHANNELS: readonly ChannelName[] = ['channel_a', 'channel_b', 'channel_c'];

/** Fields stored sealed and shown only as `<field>_set` (docs/DESIGN.md 7). */
export const SECRET_FIELDS: Record<ChannelName, readonly string[]> = {
  channel_a: ['private_key', 'public_key'],
  channel_b: ['private_key', 'api_v3_key', 'platform_public_key'],
  channel_c: ['key'],
};

const PLAIN_FIELDS: Record<ChannelName, readonly string[]> = {
  channel_a: ['app_id', 'seller_id', 'gateway_url'],
  channel_b: ['app_id', 'mch_id', 'serial_no', 'platform_serial_no', 'api_base_url'],
  channel_c: ['pid', 'gateway_url', 'api_url', 'submit_url', 'pay_type'],
};

const URL_FIELDS = new Set(['gateway_url', 'api_base_url', 'api_url', 'submit_url']);

/** Stages where the mock cashier can never be switched on (docs/DESIGN.md 3 **fix**). */
export function isProductionStage(stage: string): boolean {
  return stage === 'prod' || stage === 'production';
}

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

const KEY_MAX = 16_384;
const text = (max: number) => z.optional(z.nullable(z.string().check(z.maxLength(max))));
const enabled = () => z.optional(z.boolean());

/** PUT /api/v1/admin/payment: any subset of the GET shape, secrets under their own names. */
export const settingsPatchSchema = z.object({
  default_gateway: z.optional(z.enum(PROVIDERS)),
  mock: z.optional(z.object({ enabled: enabled() })),
  channel_a: z.optional(
    z.object({
      enabled: enabled(),
      app_id: text(64),
      seller_id: text(64),
      gateway_url: text(512),
      private_key: text(KEY_MAX),
      public_key: text(KEY_MAX),
    }),
  ),
  channel_b: z.optional(
    z.object({
      enabled: enabled(),
      app_id: text(64),
      mch_id: text(64),
      serial_no: text(128),
      platform_serial_no: text(128),
      api_base_url: text(512),
      private_key: text(KEY_MAX),
      api_v3_key: text(128),
      platform_public_key: text(KEY_MAX),
    }),
  ),
  channel_c: z.optional(
    z.object({
      enabled: enabled(),
      pid: text(64),
      gateway_url: text(512),
      api_url: text(512),
      submit_url: text(512),
      pay_type: text(32),
      key: text(512),
    }),
  ),
});
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

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
 * are http(s). Completeness of enabled channels is checked by building their adapters (registry.ts).
 */
export function checkSettingFormats(settings: PaymentSettings, stage: string): void {
  if (settings.mock.enabled && isProductionStage(stage)) {
    throw errors.validation([
      { field: 'mock.enabled', message: 'the mock cashier cannot be enabled in production' },
    ]);
  }
  for (const name of CHANNELS) {
    const section = settings[name] as unknown as Record<string, string | boolean | undefined>;
    try {
      for (const [field, value] of Object.entries(section)) {
        if (typeof value !== 'string') continue;
        if (URL_FIELDS.has(field)) optionalHttpUrl(field, value);
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

// ---- storage -------------------------------------------------------------------------------------

export const SETTINGS_KEY = { pk: 'settings#payment', sk: 'settings' };
export const SETTINGS_VERSION_KEY = { pk: 'settings#payment', sk: 'version' };

interface SettingsItem {
  pk: string;
  sk: string;
  version: number;
  updated_at: string;
  values: Omit<PaymentSettings, ChannelName> & Record<ChannelName, Record<string, string | boolean>>;
  /** `channel_b.api_v3_key` -> master-key ciphertext. */
  secrets: Record<string, string>;
}

export interface VersionedSettings {
  version: number;
  settings: PaymentSettings;
}

const secretContext = (path: string) => ({ purpose: 'payment-setting', field: path });

export class PaymentSettingsStore {
  constructor(
    private readonly table: Table,
    private readonly masterKey: () => Promise<MasterKey>,
    private readonly seed: () => PaymentSettings,
  ) {}

  /**
   * The stored version only: the cheap read every request makes. It lives in its own tiny item (well under
   * 1 KB, so one read unit) rather than in the settings item, whose sealed keys make it several KB.
   */
  async currentVersion(): Promise<number | undefined> {
    const item = await this.table.get<{ pk: string; sk: string; version: number }>(SETTINGS_VERSION_KEY);
    return typeof item?.version === 'number' ? item.version : undefined;
  }

  /** The settings with secrets opened; written from the config file first if the table has none yet. */
  async load(): Promise<VersionedSettings> {
    const stored = await this.table.get<SettingsItem & Record<string, unknown>>(SETTINGS_KEY);
    if (stored) return this.open(stored);
    const seeded = await this.toItem(this.seed(), 1);
    try {
      await this.table.transact([
        {
          Put: {
            Item: { ...SETTINGS_VERSION_KEY, version: 1 },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            Item: seeded as unknown as Record<string, unknown>,
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ]);
      return { version: 1, settings: this.seed() };
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      // Another container wrote them first: theirs stand.
      const winner = await this.table.get<SettingsItem & Record<string, unknown>>(SETTINGS_KEY);
      if (!winner) throw error;
      return this.open(winner);
    }
  }

  /** Replaces the settings if nobody saved since `expectedVersion` was read; 409 otherwise. */
  async save(settings: PaymentSettings, expectedVersion: number): Promise<VersionedSettings> {
    const version = expectedVersion + 1;
    const item = await this.toItem(settings, version);
    try {
      // One transaction: the version item moves only together with the settings it announces.
      await this.table.transact([
        {
          Update: {
            Key: SETTINGS_VERSION_KEY,
            UpdateExpression: 'SET version = :next',
            ConditionExpression: 'version = :expected',
            ExpressionAttributeValues: { ':next': version, ':expected': expectedVersion },
          },
        },
        { Put: { Item: item as unknown as Record<string, unknown> } },
      ]);
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        throw errors.conflict('Payment settings were changed by another request; read them again');
      }
      throw error;
    }
    return { version, settings };
  }

  private async toItem(settings: PaymentSettings, version: number): Promise<SettingsItem> {
    const key = await this.masterKey();
    const secrets: Record<string, string> = {};
    const values = {
      default_gateway: settings.default_gateway,
      mock: { enabled: settings.mock.enabled },
    } as SettingsItem['values'];
    for (const name of CHANNELS) {
      const section = settings[name] as unknown as Record<string, string | boolean | undefined>;
      const plain: Record<string, string | boolean> = { enabled: section.enabled === true };
      for (const field of PLAIN_FIELDS[name]) {
        const value = section[field];
        if (typeof value === 'string') plain[field] = value;
      }
      for (const field of SECRET_FIELDS[name]) {
        const value = section[field];
        const path = `${name}.${field}`;
        if (typeof value === 'string') secrets[path] = await key.encrypt(value, secretContext(path));
      }
      values[name] = plain;
    }
    return {
      ...SETTINGS_KEY,
      version,
      updated_at: isoWithOffset(this.table.clock()),
      values,
      secrets,
    };
  }

  private async open(item: SettingsItem): Promise<VersionedSettings> {
    const key = await this.masterKey();
    const settings: PaymentSettings = {
      default_gateway: item.values.default_gateway,
      mock: { enabled: item.values.mock?.enabled === true },
      channel_a: { enabled: false },
      channel_b: { enabled: false },
      channel_c: { enabled: false },
    };
    for (const name of CHANNELS) {
      const target = { ...(item.values[name] ?? {}) } as Record<string, string | boolean>;
      target.enabled = target.enabled === true;
      for (const field of SECRET_FIELDS[name]) {
        const path = `${name}.${field}`;
        const sealed = item.secrets?.[path];
        if (sealed) target[field] = (await key.decrypt(sealed, secretContext(path))).toString('utf8');
      }
      (settings as unknown as Record<string, unknown>)[name] = target;
    }
    return { version: item.version, settings };
  }
}
