// One front door (lib/http/front-door.ts): a function behind API Gateway serves only requests carrying the
// CDN's origin secret, accepts the previous value while a rotation settles, and sees a rotated secret once
// its cache ages out, whether the secret lives in Secrets Manager or in the local data folder.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureLocalOriginSecret, localEdgeHeaders } from '#infra/local/front-door.ts';
import { ok } from '#lib/http/envelope.ts';
import {
  cachedOriginSecrets,
  LOCAL_ORIGIN_SECRET_FILE,
  type OriginSecrets,
  type OriginSecretsSource,
  parseOriginSecrets,
} from '#lib/http/front-door.ts';
import { defineRoute, handlerOverRoutes, noCredentials } from '#lib/http/handler.ts';
import { configSchema } from '#lib/platform/config/schema.ts';
import { frontDoorOf, groupFrontDoor } from '#lib/wiring/front-door.ts';
import { groupResources } from '#lib/wiring/resources.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';

const CURRENT = `${'c'.repeat(24)}urrent-origin-secret-0001`;
const PREVIOUS = `${'p'.repeat(24)}revious-origin-secret-0001`;

/** A files-group handler whose one route reports what it was given. */
function handlerBehind(frontDoor: OriginSecretsSource | undefined, functionUrlIsFrontDoor = false) {
  let served = 0;
  const handler = handlerOverRoutes(
    'meta',
    {
      'GET /healthz': defineRoute({
        run: async (request) => {
          served += 1;
          return ok({ ip: request.sourceIp, headers: request.headers });
        },
      }),
    },
    { authenticate: noCredentials, frontDoor, functionUrlIsFrontDoor },
  );
  return {
    call: async (headers: Record<string, string> = {}, sourceIp = '198.51.100.7') => {
      const result = await handler(apiEvent({ path: '/healthz', headers, sourceIp }), lambdaContext);
      return {
        status: result.statusCode,
        body: parseBody(result) as {
          code: number;
          message: string;
          data: { ip: string; headers: Record<string, string> };
        },
      };
    },
    served: () => served,
  };
}

const fixed =
  (secrets: OriginSecrets): OriginSecretsSource =>
  async () =>
    secrets;

describe('the front door check', () => {
  it('refuses a request without the proof with a 403 envelope, before any route runs', async () => {
    const api = handlerBehind(fixed({ current: CURRENT }));

    const answer = await api.call();

    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({
      code: 403,
      message: 'Requests reach this service only through its public address',
      data: null,
    });
    expect(api.served()).toBe(0);
  });

  it('refuses a wrong proof, one of another length, and an empty one, never echoing the secret', async () => {
    const api = handlerBehind(fixed({ current: CURRENT, previous: PREVIOUS }));

    for (const proof of [`${CURRENT.slice(0, -1)}X`, CURRENT.slice(1), `${CURRENT}x`, '']) {
      const answer = await api.call({ 'x-origin-verify': proof });
      expect(answer.status, proof).toBe(403);
      expect(JSON.stringify(answer.body)).not.toContain(CURRENT.slice(0, 20));
    }
    expect(api.served()).toBe(0);
  });

  it('serves a group whose function URL is a front door there without the proof, believing no viewer claim', async () => {
    const callback = handlerBehind(fixed({ current: CURRENT }), true);
    const functionUrlHost = 'abcdefghijklmnop.lambda-url.us-east-1.on.aws';

    const atUrl = await callback.call({ host: functionUrlHost, 'x-viewer-address': '203.0.113.9' });
    const throughApi = await callback.call({ host: 'a1b2c3.execute-api.us-east-1.amazonaws.com' });
    const claimed = await callback.call({ host: `${functionUrlHost}.example.com` });
    const otherGroup = await handlerBehind(fixed({ current: CURRENT })).call({ host: functionUrlHost });

    expect(atUrl.status).toBe(200);
    expect(atUrl.body.data.ip).toBe('198.51.100.7');
    expect(atUrl.body.data.headers).not.toHaveProperty('x-viewer-address');
    expect(throughApi.status).toBe(403);
    expect(claimed.status).toBe(403);
    expect(otherGroup.status).toBe(403);
  });

  it('serves the current value, with the viewer address the CDN named and neither header left', async () => {
    const api = handlerBehind(fixed({ current: CURRENT }));

    const answer = await api.call({ 'x-origin-verify': CURRENT, 'x-viewer-address': '203.0.113.9' });

    expect(answer.status).toBe(200);
    expect(answer.body.data.ip).toBe('203.0.113.9');
    expect(answer.body.data.headers).not.toHaveProperty('x-origin-verify');
    expect(answer.body.data.headers).not.toHaveProperty('x-viewer-address');
  });

  it('keeps the connection address when the CDN names none or names something that is not an address', async () => {
    const api = handlerBehind(fixed({ current: CURRENT }));

    const none = await api.call({ 'x-origin-verify': CURRENT }, '198.51.100.7');
    const junk = await api.call(
      { 'x-origin-verify': CURRENT, 'x-viewer-address': 'not-an-ip' },
      '198.51.100.7',
    );

    expect(none.body.data.ip).toBe('198.51.100.7');
    expect(junk.body.data.ip).toBe('198.51.100.7');
  });

  it('serves the previous value while a rotation settles, and not once it is dropped', async () => {
    let secrets: OriginSecrets = { current: CURRENT, previous: PREVIOUS };
    const api = handlerBehind(async () => secrets);

    expect((await api.call({ 'x-origin-verify': PREVIOUS })).status).toBe(200);
    secrets = { current: CURRENT };
    expect((await api.call({ 'x-origin-verify': PREVIOUS })).status).toBe(403);
    expect((await api.call({ 'x-origin-verify': CURRENT })).status).toBe(200);
  });

  it('checks nothing without a front door (in-process tests: no CDN in front)', async () => {
    const api = handlerBehind(undefined);
    const none = handlerBehind(async () => undefined);

    expect((await api.call()).status).toBe(200);
    expect((await none.call()).status).toBe(200);
  });

  it('answers 503 when the secret cannot be read, and serves again once it can', async () => {
    let failing = true;
    const api = handlerBehind(async () => {
      if (failing) throw Object.assign(new Error('connect ECONNREFUSED'), { name: 'Error' });
      return { current: CURRENT };
    });

    const down = await api.call({ 'x-origin-verify': CURRENT });
    failing = false;
    const up = await api.call({ 'x-origin-verify': CURRENT });

    expect(down.status).toBe(503);
    expect(up.status).toBe(200);
  });

  it('answers 500 naming the wiring when the group did not declare the need', async () => {
    const settings = configSchema.parse({ front_door: { provider: 'secrets-manager', secret_id: 'x' } });
    const api = handlerBehind(groupFrontDoor('meta', { bucket: 'read' }, settings));

    const answer = await api.call({ 'x-origin-verify': CURRENT });

    expect(answer.status).toBe(500);
    expect(answer.body.message).not.toContain(CURRENT);
  });
});

describe('the origin secret', () => {
  it('must be JSON with a long enough current value and an optional previous one', () => {
    expect(parseOriginSecrets(JSON.stringify({ current: CURRENT }))).toEqual({ current: CURRENT });
    expect(parseOriginSecrets(JSON.stringify({ current: CURRENT, previous: PREVIOUS }))).toEqual({
      current: CURRENT,
      previous: PREVIOUS,
    });
    for (const text of ['not json', '{}', '{"current":"short"}', `{"current":"${CURRENT}","previous":7}`]) {
      expect(() => parseOriginSecrets(text), text).toThrow(/origin secret/);
    }
    // The error never repeats the value it refused.
    expect(() => parseOriginSecrets('{"current":"short-secret-value"}')).not.toThrow(/short-secret-value/);
  });

  it('is read again only after its max age, and a failed read is not cached', async () => {
    let now = 0;
    let value: OriginSecrets = { current: CURRENT };
    let reads = 0;
    const read = cachedOriginSecrets(
      async () => {
        reads += 1;
        return value;
      },
      60,
      () => now,
    );

    expect(await read()).toEqual({ current: CURRENT });
    value = { current: PREVIOUS };
    now = 59_000;
    expect(await read()).toEqual({ current: CURRENT });
    now = 60_001;
    expect(await read()).toEqual({ current: PREVIOUS });
    expect(reads).toBe(2);
  });
});

describe('the origin secret in Secrets Manager (Powertools Parameters)', () => {
  const secrets = mockClient(SecretsManagerClient);
  const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:OriginSecret-AbCdEf';

  beforeEach(() => {
    secrets.reset();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T10:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('picks up a rotated value once the cache ages out, with no redeploy', async () => {
    secrets
      .on(GetSecretValueCommand, { SecretId: ARN })
      .resolvesOnce({ SecretString: JSON.stringify({ current: PREVIOUS }) })
      .resolves({ SecretString: JSON.stringify({ current: CURRENT, previous: PREVIOUS }) });
    const settings = configSchema.parse({
      front_door: { provider: 'secrets-manager', secret_id: ARN, cache_seconds: 300 },
    });
    const api = handlerBehind(frontDoorOf(groupResources('meta', { frontDoor: true }, settings)));

    expect((await api.call({ 'x-origin-verify': PREVIOUS })).status).toBe(200);
    expect((await api.call({ 'x-origin-verify': CURRENT })).status).toBe(403);
    vi.setSystemTime(new Date('2026-11-22T10:05:01Z'));
    expect((await api.call({ 'x-origin-verify': CURRENT })).status).toBe(200);
    expect((await api.call({ 'x-origin-verify': PREVIOUS })).status).toBe(200);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });
});

describe('the origin secret locally (the local server plays the CDN)', () => {
  const fakeRequest = (address: string) =>
    ({ socket: { remoteAddress: address } }) as unknown as IncomingMessage;

  it('is created once in the data folder and sent by the local server over what the client sent', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'front-door-'));
    const file = ensureLocalOriginSecret(dataDir);
    const first = readFileSync(file, 'utf8');
    ensureLocalOriginSecret(dataDir);

    const headers = localEdgeHeaders(dataDir)(fakeRequest('::ffff:127.0.0.1'));

    expect(file).toBe(join(dataDir, LOCAL_ORIGIN_SECRET_FILE));
    expect(readFileSync(file, 'utf8')).toBe(first);
    expect(headers['x-origin-verify']).toBe(parseOriginSecrets(first).current);
    expect(headers['x-viewer-address']).toBe('127.0.0.1');
  });

  it('opens the front door of a function reading the same file, and sees a local rotation', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'front-door-'));
    const edge = localEdgeHeaders(dataDir);
    const settings = configSchema.parse({
      data_dir: dataDir,
      front_door: { provider: 'local', cache_seconds: 1 },
    });
    const api = handlerBehind(frontDoorOf(groupResources('meta', { frontDoor: true }, settings)));

    const old = edge(fakeRequest('127.0.0.1'));
    expect((await api.call(old)).status).toBe(200);
    expect((await api.call()).status).toBe(403);

    writeFileSync(
      join(dataDir, LOCAL_ORIGIN_SECRET_FILE),
      JSON.stringify({ current: CURRENT, previous: old['x-origin-verify'] }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await api.call(edge(fakeRequest('127.0.0.1')))).status).toBe(200);
    expect((await api.call(old)).status).toBe(200);
  });
});
