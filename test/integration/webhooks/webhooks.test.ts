// Webhooks (docs/WEBHOOKS.md) against DynamoDB Local and a receiver on 127.0.0.1: a signed file.uploaded
// after an upload, checked with the snippet docs/WEBHOOKS.md shows; retries on the documented back-off
// (fixed clock), each attempt listed; special targets refused under a production policy; at most five
// endpoints under concurrent creation, and the secret shown once only.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '#lib/platform/config/index.ts';
import { webhookPrivateTargets } from '#lib/platform/config/schema.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { checkTargetUrl, guardedLookup, isSpecialAddress } from '#lib/webhooks/addresses.ts';
import { buildWebhooks } from '#lib/webhooks/build.ts';
import { RETRY_DELAYS_MS } from '#lib/webhooks/deliveries.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { drainOutbox } from '#test/support/outbox.ts';
import { sharedMasterKey, testTable } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callUpload, uniquePng, uploadInput } from '../files/helpers.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 answering the queued statuses in turn (then 200). */
async function startReceiver() {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      response.statusCode = statuses.shift() ?? 200;
      response.end(response.statusCode === 200 ? 'thanks' : 'x'.repeat(1000));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, received, statuses, url: (path: string) => `http://127.0.0.1:${port}${path}` };
}

/** docs/WEBHOOKS.md's verification snippet, as the page shows it, loaded as a module. */
async function documentedVerifier() {
  const page = readFileSync(new URL('../../../docs/WEBHOOKS.md', import.meta.url), 'utf8');
  const snippet = /<!-- verify-snippet -->\n```js\n([\s\S]*?)```/.exec(page)?.[1];
  if (!snippet) throw new Error('docs/WEBHOOKS.md has no verification snippet');
  const file = join(mkdtempSync(join(tmpdir(), 'webhook-snippet-')), 'verify.mjs');
  writeFileSync(file, snippet);
  const module = (await import(pathToFileURL(file).href)) as {
    verifyWebhook: (secret: string, header: string, body: string) => boolean;
  };
  return module.verifyWebhook;
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let alice: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  receiver = await startReceiver();
  alice = await createTestAccount();
});

afterAll(() => {
  receiver.server.close();
});

const createEndpoint = (account: TestAccount, body: object) =>
  callUpload<{ id: string; secret: string; url: string; events: string[] }>({
    method: 'POST',
    path: '/api/v1/webhooks',
    body,
    headers: account.headers,
  });

describe('a webhook receiver on 127.0.0.1', () => {
  it('gets a signed file.uploaded after an upload, which the documented snippet verifies', async () => {
    const created = await createEndpoint(alice, { url: receiver.url('/uploads'), events: ['file.uploaded'] });
    expect(created.status).toBe(201);
    const { secret } = created.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);

    const upload = await callUpload<{ id: string; key: string }>(
      uploadInput(alice.headers, uniquePng(makePng)),
    );
    expect(upload.status).toBe(200);
    await drainOutbox();

    const got = receiver.received.filter((one) => one.path === '/uploads');
    expect(got).toHaveLength(1);
    const event = JSON.parse(got[0]!.body);
    expect(event).toMatchObject({
      type: 'file.uploaded',
      data: { id: upload.body.data.id, key: upload.body.data.key },
    });
    expect(event.id).toMatch(/^evt_/);
    const header = String(got[0]!.headers['webhook-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const verifyWebhook = await documentedVerifier();
    expect(verifyWebhook(secret, header, got[0]!.body)).toBe(true);
    expect(verifyWebhook(secret, header, got[0]!.body.replace('file.uploaded', 'file.deleted'))).toBe(false);
    expect(verifyWebhook('whsec_another', header, got[0]!.body)).toBe(false);

    // A replayed stream record makes no second delivery; the owner's delete sends file.deleted only where
    // the endpoint takes it (this one does not).
    await drainOutbox();
    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${upload.body.data.id}`,
      headers: alice.headers,
    });
    expect(deleted.status).toBe(200);
    await drainOutbox();
    expect(receiver.received.filter((one) => one.path === '/uploads')).toHaveLength(1);

    const deliveries = await callUpload<Array<{ type: string; state: string; attempts: unknown[] }>>({
      method: 'GET',
      path: `/api/v1/webhooks/${created.body.data.id}/deliveries`,
      headers: alice.headers,
    });
    expect(deliveries.body.data).toMatchObject([
      { type: 'file.uploaded', state: 'delivered', attempts: [{ status: 200 }] },
    ]);
  });

  it('gets file.deleted when the owner deletes a file for good, not when it goes to the trash', async () => {
    const owner = await createTestAccount();
    const created = await createEndpoint(owner, { url: receiver.url('/deletes'), events: ['file.deleted'] });
    const upload = await callUpload<{ id: string }>(uploadInput(owner.headers, uniquePng(makePng)));
    await drainOutbox();
    expect(receiver.received.filter((one) => one.path === '/deletes')).toHaveLength(0);

    await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${upload.body.data.id}`,
      headers: owner.headers,
    });
    await drainOutbox();
    // In the trash it may come back: nothing is said yet.
    expect(receiver.received.filter((one) => one.path === '/deletes')).toHaveLength(0);
    await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/trash/${upload.body.data.id}`,
      headers: owner.headers,
    });
    await drainOutbox();
    const got = receiver.received.filter((one) => one.path === '/deletes');
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({
      type: 'file.deleted',
      data: { id: upload.body.data.id },
    });
    const verifyWebhook = await documentedVerifier();
    expect(
      verifyWebhook(created.body.data.secret, String(got[0]!.headers['webhook-signature']), got[0]!.body),
    ).toBe(true);
  });
});

describe('retries', () => {
  const start = Date.parse('2026-11-29T10:00:00.000Z');

  async function setUp(path: string) {
    const clock = movableClock(start);
    const webhooks = buildWebhooks({
      table: testTable(clock),
      masterKey: sharedMasterKey(),
      allowPrivate: true,
      listingShards: config.listing_shards,
      baseUrl: config.base_url,
    });
    const owner = await createTestAccount();
    const endpoint = await webhooks.endpoints.create(owner.account.id, {
      url: receiver.url(path),
      events: ['file.uploaded'],
    });
    await webhooks.deliveries.fanOut([
      {
        id: `evt_${path.slice(1)}`,
        type: 'file.uploaded',
        created_at: isoWithOffset(clock()),
        account_id: owner.account.id,
        data: { id: 'f' },
      },
    ]);
    const list = () => webhooks.deliveries.list(owner.account.id, endpoint.id);
    const hits = () => receiver.received.filter((one) => one.path === path).length;
    return { clock, webhooks, list, hits };
  }

  it('tries a failing receiver again after a minute, and lists both attempts', async () => {
    receiver.statuses.push(500);
    const { clock, webhooks, list, hits } = await setUp('/flaky');
    expect(hits()).toBe(1);
    let [delivery] = await list();
    expect(delivery).toMatchObject({ state: 'pending', attempts: [{ status: 500, error: null }] });
    expect(delivery!.attempts[0]!.response.length).toBe(256);
    expect(Date.parse(delivery!.next_attempt_at!)).toBe(start + 60_000);

    clock.advance(59_000);
    await webhooks.deliveries.retryDue();
    expect(hits()).toBe(1);

    clock.advance(1_000);
    await webhooks.deliveries.retryDue();
    expect(hits()).toBe(2);
    [delivery] = await list();
    expect(delivery).toMatchObject({ state: 'delivered', next_attempt_at: null });
    expect(delivery!.attempts.map((attempt) => attempt.status)).toEqual([500, 200]);
    expect(delivery!.attempts[1]!.response).toBe('thanks');
  });

  it('follows the back-off schedule, then gives up 24 h after the event', async () => {
    receiver.statuses.push(...Array(10).fill(503));
    const { clock, webhooks, list, hits } = await setUp('/down');
    const expected = [start];
    for (const delay of RETRY_DELAYS_MS) {
      const [delivery] = await list();
      const next = Date.parse(delivery!.next_attempt_at ?? 'NaN');
      if (Number.isNaN(next)) break;
      expect(next).toBe(expected.at(-1)! + delay);
      clock.set(next);
      await webhooks.deliveries.retryDue();
      expected.push(next);
    }
    const minutes = expected.map((at) => (at - start) / 60_000);
    expect(minutes).toEqual([0, 1, 6, 36, 156, 516, 1236]);
    const [delivery] = await list();
    expect(delivery).toMatchObject({ state: 'failed', next_attempt_at: null });
    expect(delivery!.attempts).toHaveLength(7);
    expect(hits()).toBe(7);
    receiver.statuses.length = 0;
  });
});

describe('targets under a production policy', () => {
  const prod = { allowPrivate: false };
  it.each([
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://192.168.0.10/hook',
    'https://localhost/hook',
    'http://example.com/hook',
  ])('refuses %s with a 400', (url) => {
    expect(() => checkTargetUrl(url, prod)).toThrow(expect.objectContaining({ errorName: 'bad_request' }));
  });

  it('accepts a public https URL, and the special ranges are what the block list says', () => {
    expect(checkTargetUrl('https://hooks.example.com/in', prod)).toBe('https://hooks.example.com/in');
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.1.1',
      '::1',
      'fe80::1',
      '100.64.0.1',
      '172.20.0.1',
    ])
      expect(isSpecialAddress(address)).toBe(true);
    for (const address of ['93.184.216.34', '2606:4700::1111']) expect(isSpecialAddress(address)).toBe(false);
  });

  it('refuses at connect time a name that resolves to a special address (DNS rebinding)', async () => {
    const error = await new Promise<Error | null>((resolve) =>
      guardedLookup(prod)('localhost', {}, (failure) => resolve(failure)),
    );
    expect(error?.name).toBe('RefusedTargetError');
  });

  it('is forced in production whatever the setting says', () => {
    const settings = { ...config, webhooks: { allow_private_targets: true } };
    expect(webhookPrivateTargets({ ...settings, stage: 'test' })).toBe(true);
    expect(webhookPrivateTargets({ ...settings, stage: 'prod' })).toBe(false);
    expect(webhookPrivateTargets({ ...settings, stage: 'x', deployment: { production: true } })).toBe(false);
  });

  it('records a refused attempt at delivery, and the receiver gets nothing', async () => {
    const table = testTable();
    const shared = { table, masterKey: sharedMasterKey(), listingShards: config.listing_shards };
    const local = buildWebhooks({ ...shared, allowPrivate: true, baseUrl: config.base_url });
    const production = buildWebhooks({ ...shared, allowPrivate: false, baseUrl: config.base_url });
    const owner = await createTestAccount();
    // Registered where it was allowed, delivered by a production deployment.
    const endpoint = await local.endpoints.create(owner.account.id, {
      url: receiver.url('/inside'),
      events: ['order.paid'],
    });
    await production.deliveries.fanOut([
      {
        id: 'evt_inside',
        type: 'order.paid',
        created_at: isoWithOffset(new Date()),
        account_id: owner.account.id,
        data: {},
      },
    ]);
    const [delivery] = await production.deliveries.list(owner.account.id, endpoint.id);
    expect(delivery!.attempts).toMatchObject([{ status: null, error: expect.stringContaining('loopback') }]);
    expect(receiver.received.filter((one) => one.path === '/inside')).toHaveLength(0);
  });
});

describe('endpoints', () => {
  it('holds at most five under concurrent creation, answering 409 past them', async () => {
    const owner = await createTestAccount();
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, n) =>
        createEndpoint(owner, { url: `https://hooks.example.com/${n}`, events: ['order.paid'] }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status !== 201).every((status) => status === 409)).toBe(true);
    const listed = await callUpload<Array<{ id: string }>>({
      method: 'GET',
      path: '/api/v1/webhooks',
      headers: owner.headers,
    });
    expect(listed.body.data).toHaveLength(5);

    // The secret was in its creation's answer only: not in the listing nor in the deliveries' listing.
    const secrets = answers
      .filter((answer) => answer.status === 201)
      .map((answer) => answer.body.data.secret);
    const text = JSON.stringify(listed.body);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(Object.keys(listed.body.data[0]!).sort()).toEqual([
      'created_at',
      'enabled',
      'events',
      'id',
      'url',
    ]);

    // Deleting one makes room for one more.
    const removed = await callUpload({
      method: 'DELETE',
      path: `/api/v1/webhooks/${listed.body.data[0]!.id}`,
      headers: owner.headers,
    });
    expect(removed.status).toBe(200);
    const again = await createEndpoint(owner, {
      url: 'https://hooks.example.com/again',
      events: ['order.paid'],
    });
    expect(again.status).toBe(201);
    expect(
      (await createEndpoint(owner, { url: 'https://hooks.example.com/6', events: ['order.paid'] })).status,
    ).toBe(409);
  });

  it('delivers nothing to an endpoint turned off, and again once it is on', async () => {
    const owner = await createTestAccount();
    const created = await createEndpoint(owner, { url: receiver.url('/off'), events: ['file.uploaded'] });
    const patch = (enabled: boolean, account = owner) =>
      callUpload<{ enabled: boolean }>({
        method: 'PATCH',
        path: `/api/v1/webhooks/${created.body.data.id}`,
        body: { enabled },
        headers: account.headers,
      });
    expect((await patch(false, alice)).status).toBe(404);
    const off = await patch(false);
    expect(off.status).toBe(200);
    expect(off.body.data.enabled).toBe(false);
    await callUpload(uploadInput(owner.headers, uniquePng(makePng)));
    await drainOutbox();
    expect(receiver.received.filter((one) => one.path === '/off')).toHaveLength(0);

    expect((await patch(true)).body.data.enabled).toBe(true);
    await callUpload(uploadInput(owner.headers, uniquePng(makePng)));
    await drainOutbox();
    expect(receiver.received.filter((one) => one.path === '/off')).toHaveLength(1);
  });

  it('answers 400 naming the problem for a bad URL or event, and 404 for another owner', async () => {
    const owner = await createTestAccount();
    const bad = await createEndpoint(owner, { url: 'not a url', events: ['file.uploaded'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('url');
    const badEvent = await createEndpoint(owner, {
      url: 'https://hooks.example.com/',
      events: ['file.renamed'],
    });
    expect(badEvent.status).toBe(400);
    const mine = await createEndpoint(owner, {
      url: 'https://hooks.example.com/',
      events: ['file.uploaded'],
    });
    const theirs = await callUpload({
      method: 'GET',
      path: `/api/v1/webhooks/${mine.body.data.id}/deliveries`,
      headers: alice.headers,
    });
    expect(theirs.status).toBe(404);
    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/webhooks/${mine.body.data.id}`,
      headers: alice.headers,
    });
    expect(deleted.status).toBe(404);
  });
});
