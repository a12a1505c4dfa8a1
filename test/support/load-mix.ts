// A load mix of many accounts, in process through the group handlers: logins (each account from its own
// address, as people are), direct uploads (half public), uploads with the static upload token from many
// clients, gallery pages, channel orders and the verified callbacks that settle them, orders with one
// popular coupon, views of one viral share link (no password, no limit), and deletes. Every
// request runs inside the heat recorder's `track`, so each partition it touches is charged to its path and
// caller. Shared by the load-mix test and the bench's heat run.
import { randomBytes } from 'node:crypto';
import type { ApiResult } from '#lib/http/event.ts';
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

export interface LoadMixHandlers {
  accounts: Handler;
  files: Handler;
  payments: Handler;
  paymentCallback: Handler;
  shares: Handler;
}

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
) {
  const form = buildMultipart([
    { name: 'file', filename: 'shot.png', contentType: 'image/png', data: bytes },
    { name: 'permission', data: Buffer.from(permission) },
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
  const link = dataOf<{ id: string }>(
    await call(
      handlers.shares,
      apiEvent({
        method: 'POST',
        path: '/api/v1/shares',
        headers: admin.headers,
        body: { file_id: shared.id },
      }),
      201,
    ),
  );
  const people: Array<TestAccount & { address: string; uploads: string[] }> = [];
  for (let n = 0; n < options.accounts; n++) {
    const account = await createTestAccount({ username: `mix_${prefix}_${n}` });
    people.push({ ...account, address: `198.18.${n >> 8}.${n & 255}`, uploads: [] });
  }
  options.startRecording();

  const started = performance.now();
  const track = (path: string, caller: string, run: () => Promise<ApiResult>) =>
    recorder.track(path, caller, run);
  for (let round = 0; round < options.rounds; round++) {
    await pool(people, options.concurrency ?? 10, async (person) => {
      const caller = person.account.id;
      const n = people.indexOf(person);
      await track('login', caller, () =>
        call(
          handlers.accounts,
          apiEvent({
            method: 'POST',
            path: '/auth/login',
            body: { username: person.account.username, password: person.password },
            sourceIp: person.address,
          }),
          200,
        ),
      );
      const uploaded = await track('upload', caller, () =>
        call(
          handlers.files,
          uploadEvent(freshPng(), person.headers.authorization, person.address, n % 2 ? 'public' : 'private'),
          200,
        ),
      );
      person.uploads.push(dataOf<{ id: string }>(uploaded).id);
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
        call(handlers.files, apiEvent({ path: '/api/v1/gallery?limit=20', sourceIp: person.address }), 200),
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
  }
  return {
    requests: { ...recorder.requests },
    usernames: people.map((person) => person.account.username.toLowerCase()),
    seconds: (performance.now() - started) / 1000,
  };
}
