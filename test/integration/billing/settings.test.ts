// Payment settings: seeded from the config file, masked on read, merged and validated on write, sealed at
// rest, and picked up by every container on its next request.
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewaySource } from '#lib/billing/registry.ts';
import { SETTINGS_KEY, settingsFromConfig } from '#lib/billing/settings.ts';
import { PaymentSettingsStore } from '#lib/billing/settings-store.ts';
import { AppError } from '#lib/core/errors.ts';
import { statusOf } from '#lib/http/errors.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { sharedMasterKey } from '#test/support/deps.ts';
import { generateTestKeyPair } from '#test/support/fake-gateways/index.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call, captureLog } from './helpers.ts';

const merchantKeys = generateTestKeyPair();
const platformKeys = generateTestKeyPair();
const API_V3_KEY = 'abcdefghijklmnopqrstuvwxyz012345';

captureLog();
let table: Table;
let admin: TestAccount;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  admin = await createTestAccount({ role: 'admin' });
});

const completeChannelB = {
  enabled: true,
  app_id: 'wxd678efh567hg6787',
  mch_id: '1230000109',
  serial_no: '3775B6A45ACD588826D15E583A95F5DD2E7B2B17',
  private_key: merchantKeys.privateKeyPkcs8Pem,
  api_v3_key: API_V3_KEY,
  platform_public_key: platformKeys.publicKeyPem,
};

function put(body: object) {
  return call('PUT', '/api/v1/admin/payment', { headers: admin.headers, body });
}

function read() {
  return call('GET', '/api/v1/admin/payment', { headers: admin.headers });
}

/** A second container: its own store and registry cache over the same table. */
function otherContainer() {
  const store = new PaymentSettingsStore(table, sharedMasterKey(), () => settingsFromConfig(config.payment));
  return new GatewaySource(store, 'test');
}

describe('payment settings', () => {
  it('writes the config-file values to the table on first use and reads them back masked', async () => {
    // Act
    const answer = await read();

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({
      default_gateway: 'manual',
      mock: { enabled: true },
      channel_a: { enabled: false, app_id: null, private_key_set: false, public_key_set: false },
      channel_b: {
        enabled: false,
        private_key_set: false,
        api_v3_key_set: false,
        platform_public_key_set: false,
      },
      channel_c: { enabled: false, pid: null, key_set: false },
      notify_urls: { channel_b: 'http://localhost:3000/api/v1/payments/channel_b/callback' },
    });
    expect(await table.get(SETTINGS_KEY)).toMatchObject({ version: 1 });
  });

  it('masks every secret as <field>_set and stores it sealed with the master key', async () => {
    // Act
    const saved = await put({ channel_b: completeChannelB });
    const again = await read();

    // Assess
    expect(saved.status).toBe(200);
    for (const answer of [saved, again]) {
      expect(answer.json.data.channel_b).toMatchObject({
        enabled: true,
        mch_id: '1230000109',
        private_key_set: true,
        api_v3_key_set: true,
        platform_public_key_set: true,
      });
      expect(answer.text).not.toContain(API_V3_KEY);
      expect(answer.text).not.toContain('PRIVATE KEY');
      expect(answer.json.data.channel_b).not.toHaveProperty('api_v3_key');
    }
    const raw = JSON.stringify(await table.get(SETTINGS_KEY));
    expect(raw).not.toContain(API_V3_KEY);
    expect(raw).not.toContain(merchantKeys.privateKeyPkcs8Pem.split('\n')[1]);
  });

  it('keeps stored secrets when a PUT leaves them empty or out', async () => {
    // Act
    const answer = await put({ channel_b: { mch_id: '1230000110', api_v3_key: '', private_key: null } });

    // Assess
    expect(answer.status).toBe(200);
    expect(answer.json.data.channel_b).toMatchObject({
      mch_id: '1230000110',
      api_v3_key_set: true,
      private_key_set: true,
      enabled: true,
    });
    const live = await otherContainer().current();
    expect(live.settings.channel_b.api_v3_key).toBe(API_V3_KEY);
  });

  it.each([
    [{ channel_b: { api_v3_key: 'too-short' } }, 'channel_b.api_v3_key'],
    [{ channel_b: { private_key: 'not a key at all' } }, 'channel_b.private_key'],
    [
      { channel_a: { public_key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' } },
      'channel_a.public_key',
    ],
    [{ channel_c: { enabled: true, pid: '1001', key: 'k' } }, 'channel_c.gateway_url'],
    [{ channel_a: { enabled: true, app_id: '2021' } }, 'channel_a.private_key'],
    [{ channel_c: { gateway_url: 'ftp://pay.example.com/' } }, 'channel_c.gateway_url'],
  ])('refuses %j with 400 naming %s, and changes nothing', async (body, field) => {
    // Prepare
    const before = await table.get(SETTINGS_KEY);

    // Act
    const answer = await put(body);

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain(field);
    expect(answer.text).not.toContain('too-short');
    expect(await table.get(SETTINGS_KEY)).toEqual(before);
  });

  it('refuses channel_b enabled without platform_public_key (SPEC 2.4 rule 1)', async () => {
    // Prepare: a fresh table state has no platform key; simulate with a store that never had one.
    const { platform_public_key: _omitted, ...withoutPlatformKey } = completeChannelB;
    const store = new PaymentSettingsStore(table, sharedMasterKey(), () =>
      settingsFromConfig(config.payment),
    );
    const current = await store.load();
    const stripped = structuredClone(current.settings);
    delete stripped.channel_b.platform_public_key;
    stripped.channel_b.enabled = false;
    await store.save(stripped, current.version);

    // Act
    const answer = await put({ channel_b: withoutPlatformKey });

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('channel_b.platform_public_key');
    expect((await read()).json.data.channel_b.enabled).toBe(false);

    // restore for the next tests
    expect((await put({ channel_b: completeChannelB })).status).toBe(200);
  });

  it('refuses a channel_b platform serial equal to the merchant serial with 400, not a 500', async () => {
    // Prepare: the channel's client library refuses such a key map at construction.
    const before = (await read()).json.data;

    // Act
    const answer = await put({
      channel_b: { ...completeChannelB, platform_serial_no: completeChannelB.serial_no },
    });

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('channel_b.platform_serial_no');
    expect((await read()).json.data).toEqual(before);
  });

  it('refuses wrong types with 400 naming the field', async () => {
    const answer = await put({ channel_a: { enabled: 'yes' } });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toContain('channel_a.enabled');
  });

  it('takes effect on the next request of another container (hot reload)', async () => {
    // Prepare: another container has its registry cached.
    const other = otherContainer();
    const before = await other.current();
    expect(before.registry.providers).toContain('mock');

    // Act: this container saves new settings.
    await put({ default_gateway: 'channel_b', mock: { enabled: false } });
    const after = await other.current();

    // Assess
    expect(after.version).toBe(before.version + 1);
    expect(after.registry.providers).toEqual(['channel_b', 'manual']);
    const gateways = await call('GET', '/api/v1/payment-gateways');
    expect(gateways.json.data).toEqual(['channel_b', 'manual']);
  });

  it('re-reads only the version while the settings are unchanged', async () => {
    const other = otherContainer();
    const first = await other.current();
    const second = await other.current();
    expect(second).toBe(first);
  });

  it('lets exactly one of two saves from the same version win (the other is 409)', async () => {
    const store = new PaymentSettingsStore(table, sharedMasterKey(), () =>
      settingsFromConfig(config.payment),
    );
    const current = await store.load();
    const outcomes = await Promise.allSettled([
      store.save(current.settings, current.version),
      store.save(current.settings, current.version),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(failed.reason).toBeInstanceOf(AppError);
    expect(statusOf(failed.reason)).toBe(409);
  });

  it('keeps the admin endpoints to administrators', async () => {
    const user = await createTestAccount();
    expect((await call('GET', '/api/v1/admin/payment', { headers: user.headers })).status).toBe(403);
    expect((await call('PUT', '/api/v1/admin/payment', { headers: user.headers, body: {} })).status).toBe(
      403,
    );
    expect((await call('GET', '/api/v1/admin/payment')).status).toBe(401);
  });
});
