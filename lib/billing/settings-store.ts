// The stored payment settings (docs/DESIGN.md 7): one versioned item in the table with every secret sealed by
// the master key, a tiny version item read on every request, config-file values written on first start.
import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/index.ts';
import { ConditionFailedError, conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import {
  CHANNELS,
  type ChannelName,
  type PaymentSettings,
  PLAIN_FIELDS,
  SECRET_FIELDS,
  SETTINGS_KEY,
  SETTINGS_VERSION_KEY,
} from './settings.ts';

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

export interface PaymentSettingsStoreDeps {
  table: Table;
  masterKey: () => Promise<MasterKey>;
  seed: () => PaymentSettings;
}

export class PaymentSettingsStore {
  constructor(private readonly deps: PaymentSettingsStoreDeps) {}

  /**
   * The stored version only: the cheap read every request makes. It lives in its own tiny item (well under
   * 1 KB, so one read unit) rather than in the settings item, whose sealed keys make it several KB.
   */
  async currentVersion(): Promise<number | undefined> {
    const item = await this.deps.table.get<{ pk: string; sk: string; version: number }>(SETTINGS_VERSION_KEY);
    return typeof item?.version === 'number' ? item.version : undefined;
  }

  /** The settings with secrets opened; written from the config file first if the table has none yet. */
  async load(): Promise<VersionedSettings> {
    const stored = await this.deps.table.get<SettingsItem & Record<string, unknown>>(SETTINGS_KEY);
    if (stored) return this.open(stored);
    const seeded = await this.toItem(this.deps.seed(), 1);
    try {
      await this.deps.table.transact([
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
      return { version: 1, settings: this.deps.seed() };
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      // Another container wrote them first: theirs stand.
      const winner = await this.deps.table.get<SettingsItem & Record<string, unknown>>(SETTINGS_KEY);
      if (!winner) throw error;
      return this.open(winner);
    }
  }

  /** Replaces the settings if nobody saved since `expectedVersion` was read; 409 otherwise. */
  async save(settings: PaymentSettings, expectedVersion: number): Promise<VersionedSettings> {
    const version = expectedVersion + 1;
    const item = await this.toItem(settings, version);
    // One transaction: the version item moves only together with the settings it announces.
    const written = this.deps.table.transact([
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
    await written.catch(
      conditionFailedAs(() =>
        errors.conflict('Payment settings were changed by another request; read them again'),
      ),
    );
    return { version, settings };
  }

  private async toItem(settings: PaymentSettings, version: number): Promise<SettingsItem> {
    const key = await this.deps.masterKey();
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
      updated_at: isoWithOffset(this.deps.table.clock()),
      values,
      secrets,
    };
  }

  private async open(item: SettingsItem): Promise<VersionedSettings> {
    const key = await this.deps.masterKey();
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
