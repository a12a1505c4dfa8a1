// Payment settings: seeded from the config file, masked on read, merged and validated on write, sealed at
// rest, seen at once by the container that saved them and within the stated staleness by every other.

import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs as paymentsNeeds } from '#functions/payments/needs.ts';
import { GatewaySource, SETTINGS_STALENESS_MS } from '#lib/billing/registry.ts';
import { SETTINGS_KEY, settingsFromConfig } from '#lib/billing/settings.ts';
import { PaymentSettingsStore } from '#lib/billing/settings-store.ts';
import { AppError } from '#lib/core/errors.ts';
import { statusOf } from '#lib/http/errors.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { sharedMasterKey } from '#test/support/deps.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { generateTestKeyPair } from '#test/support/fake-gateways/index.ts';
import { testResources } from '#test/support/resources.ts';
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

/** A save with the administrator's password, which a key or gateway URL change needs. */
function put(body: object) {
  return call('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    body: { current_password: admin.password, ...body },
  });
}

function read() {
  return call('GET', '/api/v1/admin/payment', { headers: admin.headers });
}

/** A second container: its own store and registry cache over the same table. */
function otherContainer(clock: () => Date = () => new Date()) {
  const seed = () => settingsFromConfig(config.payment);
  const store = new PaymentSettingsStore({ table, masterKey: sharedMasterKey(), seed });
  return new GatewaySource({ store, production: false, clock });
}

/** A clock that stands still until the test moves it. */
function movableClock() {
  let at = Date.now();
  return {
    now: () => new Date(at),
    advance: (ms: number) => {
      at += ms;
    },
  };
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
    const store = new PaymentSettingsStore({
      table,
      masterKey: sharedMasterKey(),
      seed: () => settingsFromConfig(config.payment),
    });
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

  it('takes effect at once in the container that saved, and within the staleness in another', async () => {
    // Prepare: another container has its registry cached, on a clock the test moves.
    const clock = movableClock();
    const other = otherContainer(clock.now);
    const before = await other.current();
    expect(before.registry.providers).toContain('mock');

    // Act: this container saves new settings.
    await put({ default_gateway: 'channel_b', mock: { enabled: false } });
    const gateways = await call('GET', '/api/v1/payment-gateways');
    const stale = await other.current();
    clock.advance(SETTINGS_STALENESS_MS);
    const after = await other.current();

    // Assess
    expect(gateways.json.data).toEqual(['channel_b', 'manual']);
    expect(stale).toBe(before);
    expect(after.version).toBe(before.version + 1);
    expect(after.registry.providers).toEqual(['channel_b', 'manual']);
  });

  it('confirms a provider another container holds as off against the table before refusing it', async () => {
    // Prepare: another container cached the settings while mock was off.
    await put({ mock: { enabled: false } });
    const other = otherContainer(movableClock().now);
    expect((await other.current()).registry.has('mock')).toBe(false);

    // Act: this container switches mock on; the other is asked for it within its staleness.
    await put({ mock: { enabled: true } });
    const confirmed = await other.confirmed((registry) => registry.has('mock'));

    // Assess
    expect(confirmed.registry.has('mock')).toBe(true);
    expect((await other.current()).registry.has('mock')).toBe(true);
  });

  it('reads no settings for a second payments request within the staleness, one version read after it', async () => {
    // Prepare: a payments container over a table client that counts its settings reads.
    const clock = movableClock();
    const reads: string[] = [];
    const client = dynamoClient(config.aws);
    const counting = {
      send: (command: { input: { Key?: { pk?: string; sk?: string } } }) => {
        const key = command.input.Key;
        if (command instanceof GetCommand && key?.pk === SETTINGS_KEY.pk) reads.push(key.sk!);
        return client.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    const deps = buildPaymentsDeps(
      testResources('payments', paymentsNeeds, {
        clock: clock.now,
        provided: { table: new Table(counting, config.table_name, clock.now) },
      }),
    );
    const handler = createPaymentsHandler(() => deps);
    const gatewaysRequest = async () => {
      const answer = await handler(
        apiEvent({ method: 'GET', path: '/api/v1/payment-gateways' }),
        lambdaContext,
      );
      expect(answer.statusCode).toBe(200);
    };

    // Act
    await gatewaysRequest();
    const first = reads.splice(0);
    await gatewaysRequest();
    const second = reads.splice(0);
    clock.advance(SETTINGS_STALENESS_MS);
    await gatewaysRequest();
    const afterStaleness = reads.splice(0);

    // Assess: loaded once, then nothing, then only the tiny version item.
    expect(first).toEqual(['settings']);
    expect(second).toEqual([]);
    expect(afterStaleness).toEqual(['version']);
  });

  it('lets exactly one of two saves from the same version win (the other is 409)', async () => {
    const store = new PaymentSettingsStore({
      table,
      masterKey: sharedMasterKey(),
      seed: () => settingsFromConfig(config.payment),
    });
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
