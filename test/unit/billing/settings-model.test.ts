// Pure rules of the payments service: settings merge/mask/validation, the gateway registry, order ids and status.
import { describe, expect, it } from 'vitest';
import { effectiveStatus, newOrderId } from '#lib/billing/model.ts';
import { buildRegistry, validateSettings } from '#lib/billing/registry.ts';
import { maskSettings, mergeSettings, type PaymentSettings, snakeField } from '#lib/billing/settings.ts';
import { AppError } from '#lib/core/errors.ts';
import { statusOf as httpStatusOf } from '#lib/http/errors.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { generateTestKeyPair } from '#test/support/fake-gateways/index.ts';

configureLogging({ level: 'silent' });

const keys = generateTestKeyPair();

function base(): PaymentSettings {
  return {
    default_gateway: 'mock',
    mock: { enabled: true },
    channel_a: { enabled: false },
    channel_b: { enabled: false },
    channel_c: { enabled: false },
  };
}

const channelC = {
  enabled: true,
  pid: '1001',
  key: 'secret-md5-key',
  gateway_url: 'https://pay.example.com/',
};

/** What the edge would answer for the error `attempt` throws (lib/core errors carry no status of their own). */
function statusOf(attempt: () => void): { status?: number; message?: string } {
  try {
    attempt();
    return {};
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: httpStatusOf(error), message: error.message };
  }
}

describe('mergeSettings', () => {
  it('keeps a stored secret when the patch leaves it empty, null or absent', () => {
    const current = { ...base(), channel_c: channelC };
    for (const key of ['', null, undefined]) {
      const next = mergeSettings(current, { channel_c: { key, pid: '1002' } });
      expect(next.channel_c.key).toBe('secret-md5-key');
      expect(next.channel_c.pid).toBe('1002');
    }
  });

  it('replaces a secret given a value, and clears a plain field given an empty string', () => {
    const current = { ...base(), channel_c: { ...channelC, api_url: 'https://pay.example.com/mapi.php' } };
    const next = mergeSettings(current, { channel_c: { key: 'new-key', api_url: '' } });
    expect(next.channel_c.key).toBe('new-key');
    expect(next.channel_c).not.toHaveProperty('api_url');
    expect(current.channel_c.key).toBe('secret-md5-key');
  });
});

describe('maskSettings', () => {
  it('shows secrets only as <field>_set', () => {
    const masked = maskSettings({
      ...base(),
      channel_a: { enabled: false, private_key: keys.privateKeyPkcs8Pem },
      channel_c: channelC,
    });
    expect(masked.channel_a).toMatchObject({ private_key_set: true, public_key_set: false });
    expect(masked.channel_c).toMatchObject({ key_set: true, pid: '1001' });
    expect(JSON.stringify(masked)).not.toContain('secret-md5-key');
    expect(JSON.stringify(masked)).not.toContain('PRIVATE KEY');
  });
});

describe('validateSettings', () => {
  it('accepts private keys as PKCS#1 PEM, PKCS#8 PEM and bare base64', () => {
    for (const privateKey of [keys.privateKeyPkcs1Pem, keys.privateKeyPkcs8Pem, keys.privateKeyBase64]) {
      const settings = {
        ...base(),
        channel_a: {
          enabled: true,
          app_id: '2021',
          private_key: privateKey,
          public_key: keys.publicKeyBase64,
        },
      };
      expect(() => validateSettings(settings, false)).not.toThrow();
    }
  });

  it('refuses an api_v3_key that is not 32 bytes even on a disabled channel', () => {
    const error = statusOf(() =>
      validateSettings({ ...base(), channel_b: { enabled: false, api_v3_key: 'x'.repeat(31) } }, false),
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain('channel_b.api_v3_key');
  });

  it('refuses enabling channel_b without platform_public_key', () => {
    const error = statusOf(() =>
      validateSettings(
        {
          ...base(),
          channel_b: {
            enabled: true,
            app_id: 'wx',
            mch_id: '1',
            serial_no: 'S',
            private_key: keys.privateKeyPkcs8Pem,
            api_v3_key: 'k'.repeat(32),
          },
        },
        false,
      ),
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain('channel_b.platform_public_key');
  });

  it('refuses the mock cashier in production', () => {
    expect(statusOf(() => validateSettings(base(), true)).status).toBe(400);
  });

  it('names settings in snake_case', () => {
    expect(snakeField('apiV3Key')).toBe('api_v3_key');
    expect(snakeField('platformPublicKey')).toBe('platform_public_key');
    expect(snakeField('pid')).toBe('pid');
  });
});

describe('buildRegistry', () => {
  it('lists the default first and registers complete, enabled channels only', () => {
    const registry = buildRegistry(
      { ...base(), default_gateway: 'channel_c', channel_c: channelC, channel_a: { enabled: true } },
      { production: false },
    );
    expect(registry.providers).toEqual(['channel_c', 'manual', 'mock']);
    expect(registry.channel('channel_c')).toBeDefined();
    expect(registry.channel('channel_a')).toBeUndefined();
  });

  it('falls back to manual when the default is not registered, and never registers mock in production', () => {
    const registry = buildRegistry({ ...base(), default_gateway: 'channel_b' }, { production: true });
    expect(registry.defaultProvider).toBe('manual');
    expect(registry.providers).toEqual(['manual']);
  });
});

describe('orders', () => {
  it('makes ids of at most 32 characters of [0-9A-Za-z], unique', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newOrderId(new Date('2026-11-21T08:00:00Z'))));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^20261121080000[0-9A-Za-z]{18}$/);
  });

  it('reads a pending order past its deadline as expired, and nothing else changes', () => {
    const now = new Date('2026-11-21T08:00:00Z');
    expect(effectiveStatus({ status: 'pending', deadline_ms: now.getTime() }, now)).toBe('expired');
    expect(effectiveStatus({ status: 'pending', deadline_ms: now.getTime() + 1 }, now)).toBe('pending');
    expect(effectiveStatus({ status: 'paid', deadline_ms: 0 }, now)).toBe('paid');
    expect(effectiveStatus({ status: 'cancelled', deadline_ms: 0 }, now)).toBe('cancelled');
  });
});
