// A load mix of many accounts, in process through the group handlers: logins (each account from its own
// address, as people are; again with the device token the first gave; and by passkey for a fifth of them),
// direct uploads (half public), uploads with the static upload token from many clients, gallery pages of
// the anonymous cap over shards already holding more than a page each, channel orders and the verified
// callbacks that settle them, orders with one popular coupon, views of one viral share link and of one album
// share (no password, no limit), deletes, takedowns by an administrator and the takedowns worker's runs
// over them, the reminders worker over grants ending soon, the moderation worker's classification of every
// upload (docs/MODERATION.md), and anonymous reports of a tenth of them. Every request runs inside the heat
// recorder's `track`, so each partition it touches is charged to its path and caller. Shared by the
// load-mix test and the bench's heat run.
import { randomBytes, randomUUID } from 'node:crypto';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { renewalItem } from '#lib/billing/renewals.ts';
import { type FileItem, fileKey, fileListingKeys, GALLERY_PAGE_MAX } from '#lib/files/files.ts';
import type { Grant } from '#lib/files/quota-model.ts';
import type { ApiResult } from '#lib/http/event.ts';
import type { Item, Key, Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from './accounts.ts';
import { apiEvent } from './events.ts';
import { buildMultipart } from './images.ts';
import {
  billingFixtures,
  call,
  callbackEvent,
  dataOf,
  freshPng,
  type Handler,
  orderEvent,
} from './main-paths.ts';
import type { HeatRecorder } from './partition-heat.ts';
import { SoftAuthenticator } from './webauthn.ts';

export interface LoadMixHandlers {
  accounts: Handler;
  files: Handler;
  payments: Handler;
  paymentCallback: Handler;
  shares: Handler;
}

/** The workers whose runs are part of the mix; the scheduled ones answer how many items they took. */
export interface LoadMixWorkers {
  takedowns: () => Promise<{ denied: number }>;
  reminders: () => Promise<{ reminded: number }>;
  /** The moderation worker's stream batch of one new file record. */
  moderation: (event: DynamoDBStreamEvent) => Promise<{ batchItemFailures: unknown[] }>;
}

/** A stream record of a new file record, as Lambda hands it to the moderation worker. */
const insertOf = (id: string): DynamoDBStreamEvent => ({
  Records: [
    {
      eventName: 'INSERT',
      dynamodb: { Keys: { pk: { S: `file#${id}` }, sk: { S: 'file' } }, SequenceNumber: '1' },
    },
  ],
});

export interface LoadMixOptions {
  handlers: LoadMixHandlers;
  recorder: HeatRecorder;
  /** Installs the recorder once the fixtures are written (they are not the load). */
  startRecording: () => void;
  accounts: number;
  rounds: number;
  /** Channel orders (each settled by its callback) per account and round (default 1). */
  ordersPerRound?: number;
  /** The static upload token of these handlers' settings, when uploads with it are part of the mix. */
  staticToken?: string;
  /** Accounts working at once (default 10). */
  concurrency?: number;
  workers: LoadMixWorkers;
  /** The table the fixtures are written to directly (the gallery's shards filled, grants ending soon). */
  table: Table;
  /** The shards of the listings of everything (`table.listing_shards`). */
  listingShards: number;
}

export interface LoadMixReport {
  requests: Record<string, number>;
  /** Every account's username, lowercased (identifiers the heat model recognises as one account's). */
  usernames: string[];
  seconds: number;
}

function uploadEvent(
  bytes: Buffer,
  authorization: string,
  sourceIp: string,
  permission: 'public' | 'private',
  albumId?: string,
) {
  const form = buildMultipart([
    { name: 'file', filename: 'shot.png', contentType: 'image/png', data: bytes },
    { name: 'permission', data: Buffer.from(permission) },
    ...(albumId ? [{ name: 'album_id', data: Buffer.from(albumId) }] : []),
  ]);
  return apiEvent({
    method: 'POST',
    path: '/api/v1/upload',
    body: form.body,
    headers: { authorization, 'content-type': form.contentType },
    sourceIp,
  });
}

/** Runs `work` over `items` with at most `limit` at once. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Writes items straight to the table, 25 a batch, a few batches at once (fixtures, not load). */
async function seed(table: Table, items: Array<Item & Key>): Promise<void> {
  const batches: Array<Array<Item & Key>> = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  await pool(batches, 4, (batch) => table.writeBatch(batch));
}

/**
 * Public files enough that every shard of the gallery holds more than an anonymous page: copies of one
 * stored record with ids of their own, listed as the gallery lists them, owned by nobody of the mix.
 */
async function fillGallery(table: Table, model: FileItem, shards: number): Promise<void> {
  const owner = randomUUID();
  const started = Date.now() - 86_400_000;
  const items = Array.from({ length: shards * (GALLERY_PAGE_MAX + 10) }, (_, n) => {
    const id = randomUUID();
    const gsi1sk = `${new Date(started + n * 1000).toISOString()}#${id}`;
    return {
      ...model,
      ...fileKey(id),
      id,
      owner_id: owner,
      gsi1pk: `files#${owner}`,
      gsi1sk,
      ...fileListingKeys({ id, permission: 'public', gsi1sk }, shards),
    } as FileItem;
  });
  await seed(table, items as Array<Item & Key>);
}

/** A passkey for the account, registered through the accounts handler (fixtures, before recording). */
async function addPasskey(accounts: Handler, person: TestAccount): Promise<SoftAuthenticator> {
  const device = new SoftAuthenticator();
  const options = await call(
    accounts,
    apiEvent({
      method: 'POST',
      path: '/auth/passkeys/register/options',
      headers: person.headers,
      body: { password: person.password },
    }),
    200,
  );
  await call(
    accounts,
    apiEvent({
      method: 'POST',
      path: '/auth/passkeys/register/verify',
      headers: person.headers,
      body: { response: device.register(dataOf(options)) },
    }),
    201,
  );
  return device;
}

export async function runLoadMix(options: LoadMixOptions): Promise<LoadMixReport> {
  const { handlers, recorder } = options;
  // The static token's owner is the first administrator; the plan and channel settings are an admin's.
  const admin = await createTestAccount({ role: 'admin' });
  const { planId } = await billingFixtures(admin);
  const prefix = randomBytes(3).toString('hex');
  // One popular coupon everyone orders with, and one viral share link of the administrator's file.
  const coupon = `MIX${prefix}`;
  await call(
    handlers.payments,
    apiEvent({
      method: 'POST',
      path: '/api/v1/admin/coupons',
      headers: admin.headers,
      body: { code: coupon, percent_off: 10, per_account_limit: 1000 },
    }),
    201,
  );
  const shared = dataOf<{ id: string }>(
    await call(
      handlers.files,
      uploadEvent(freshPng(), admin.headers.authorization, '198.19.0.1', 'public'),
      200,
    ),
  );
  const share = async (body: { file_id: string } | { album_id: string }) =>
    dataOf<{ id: string }>(
      await call(
        handlers.shares,
        apiEvent({ method: 'POST', path: '/api/v1/shares', headers: admin.headers, body }),
        201,
      ),
    );
  const link = await share({ file_id: shared.id });
  // One album of three files, shared as a page anyone opens.
  const album = dataOf<{ id: string }>(
    await call(
      handlers.files,
      apiEvent({ method: 'POST', path: '/api/v1/albums', headers: admin.headers, body: { name: 'Mix' } }),
      201,
    ),
  );
  for (let k = 0; k < 3; k++) {
    await call(
      handlers.files,
      uploadEvent(freshPng(), admin.headers.authorization, '198.19.0.1', 'public', album.id),
      200,
    );
  }
  const albumLink = await share({ album_id: album.id });
  const model = await options.table.get<FileItem>(fileKey(shared.id));
  if (!model) throw new Error('the shared file has no record');
  await fillGallery(options.table, model, options.listingShards);
  const people: Array<
    TestAccount & { address: string; uploads: string[]; deviceToken?: string; passkey?: SoftAuthenticator }
  > = [];
  for (let n = 0; n < options.accounts; n++) {
    const account = await createTestAccount({ username: `mix_${prefix}_${n}` });
    const passkey = n % 5 === 1 ? await addPasskey(handlers.accounts, account) : undefined;
    people.push({
      ...account,
      address: `198.18.${n >> 8}.${n & 255}`,
      uploads: [],
      ...(passkey ? { passkey } : {}),
    });
  }
  // Every account's paid plan ends in two days: one reminder each, mailed by the first run after a round.
  const endsSoon = (id: string): Grant =>
    ({ order_id: `mix-${id}`, plan_name: 'Mix', ends_ms: Date.now() + 2 * 86_400_000 }) as Grant;
  await seed(
    options.table,
    people.map(
      (person) =>
        renewalItem(person.account.id, endsSoon(person.account.id), options.listingShards).Put!.Item as Item &
          Key,
    ),
  );
  options.startRecording();

  const started = performance.now();
  const track = (path: string, caller: string, run: () => Promise<ApiResult>) =>
    recorder.track(path, caller, run);
  for (let round = 0; round < options.rounds; round++) {
    await pool(people, options.concurrency ?? 10, async (person) => {
      const caller = person.account.id;
      const n = people.indexOf(person);
      // The first login gives a device token; later ones present it (docs/ACCOUNTS.md "Device tokens").
      const { deviceToken } = person;
      const login = await track(deviceToken ? 'login-device' : 'login', caller, () =>
        call(
          handlers.accounts,
          apiEvent({
            method: 'POST',
            path: '/auth/login',
            body: {
              username: person.account.username,
              password: person.password,
              ...(deviceToken ? { device_token: deviceToken } : {}),
            },
            sourceIp: person.address,
          }),
          200,
        ),
      );
      person.deviceToken = dataOf<{ device_token: string }>(login).device_token;
      if (person.passkey) {
        const { passkey } = person;
        const asked = await track('passkey-options', caller, () =>
          call(
            handlers.accounts,
            apiEvent({
              method: 'POST',
              path: '/auth/passkeys/login/options',
              body: { username: person.account.username },
              sourceIp: person.address,
            }),
            200,
          ),
        );
        await track('passkey-login', caller, () =>
          call(
            handlers.accounts,
            apiEvent({
              method: 'POST',
              path: '/auth/passkeys/login/verify',
              body: { response: passkey.authenticate(dataOf(asked)) },
              sourceIp: person.address,
            }),
            200,
          ),
        );
      }
      const uploaded = await track('upload', caller, () =>
        call(
          handlers.files,
          uploadEvent(freshPng(), person.headers.authorization, person.address, n % 2 ? 'public' : 'private'),
          200,
        ),
      );
      const upload = dataOf<{ id: string; url: string }>(uploaded);
      person.uploads.push(upload.id);
      // The moderation worker's classification of it, as the table's stream hands it the new record.
      await recorder.track('classify', 'moderation-worker', async () => {
        const answer = await options.workers.moderation(insertOf(upload.id));
        if (answer.batchItemFailures.length > 0) throw new Error('the moderation worker failed a file');
        return answer;
      });
      if (n % 10 === 7) {
        // A stranger reports it (anonymous, from an address of their own).
        await track('report', `reporter-${n}`, () =>
          call(
            handlers.shares,
            apiEvent({
              method: 'POST',
              path: '/api/v1/reports',
              body: { url: upload.url, reason: 'spam' },
              sourceIp: `192.0.2.${n % 250}`,
            }),
            202,
          ),
        );
      }
      if (options.staticToken && n % 5 === 0) {
        // Another machine of the site's operator: many clients share the one static token.
        await track('upload-static', `static-client-${n}`, () =>
          call(
            handlers.files,
            uploadEvent(freshPng(), `Bearer ${options.staticToken}`, person.address, 'public'),
            200,
          ),
        );
      }
      await track('gallery', caller, () =>
        call(
          handlers.files,
          apiEvent({ path: `/api/v1/gallery?limit=${GALLERY_PAGE_MAX}`, sourceIp: person.address }),
          200,
        ),
      );
      // Orders are sampled more than once a round: each lands on one of the shards of the listings it
      // joins, and a shard's share of a few dozen orders is mostly chance.
      for (let k = 0; k < (options.ordersPerRound ?? 1); k++) {
        const order = await track('order', caller, () =>
          call(handlers.payments, orderEvent(person, planId, person.address), 201),
        );
        await track('callback', caller, async () => {
          const result = await call(
            handlers.paymentCallback,
            callbackEvent(dataOf<{ id: string }>(order).id),
            200,
          );
          if (result.body !== 'success') throw new Error(`callback not settled: ${result.body}`);
          return result;
        });
      }
      await track('coupon-order', caller, () =>
        call(
          handlers.payments,
          apiEvent({
            method: 'POST',
            path: '/api/v1/orders',
            headers: person.headers,
            body: { plan_id: planId, provider: 'channel_c', coupon_code: coupon },
            sourceIp: person.address,
          }),
          201,
        ),
      );
      await track('share-view', caller, () =>
        call(handlers.shares, apiEvent({ path: `/s/${link.id}`, sourceIp: person.address }), 200),
      );
      await track('album-share-view', caller, () =>
        call(handlers.shares, apiEvent({ path: `/s/${albumLink.id}`, sourceIp: person.address }), 200),
      );
      if (n % 10 === 3 && person.uploads.length > 1) {
        // An administrator takes one of this account's files down.
        const id = person.uploads.pop()!;
        await track('takedown', admin.account.id, () =>
          call(
            handlers.files,
            apiEvent({ method: 'DELETE', path: `/api/v1/admin/files/${id}`, headers: admin.headers }),
            200,
          ),
        );
      }
      if (round % 2 === 1) {
        const id = person.uploads.shift()!;
        await track('delete', caller, () =>
          call(
            handlers.files,
            apiEvent({
              method: 'DELETE',
              path: `/api/v1/files/${id}`,
              headers: person.headers,
              sourceIp: person.address,
            }),
            200,
          ),
        );
      }
    });
    // The scheduled workers after each round, each charged per item it took.
    await recorder.trackBatch('takedowns-run', options.workers.takedowns, (run) => run.denied);
    await recorder.trackBatch('reminders', options.workers.reminders, (run) => run.reminded);
  }
  return {
    requests: { ...recorder.requests },
    usernames: people.map((person) => person.account.username.toLowerCase()),
    seconds: (performance.now() - started) / 1000,
  };
}
