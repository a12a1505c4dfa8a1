// The service's main paths as one request each, through the production group handlers in process (as
// Lambda calls them, over this process's settings): login, me, direct upload, presign, confirm, channel
// order creation, a channel callback settling a pending order and a rendition's first render. Shared by the waits test and the bench,
// so the floors are checked and measured on the same requests. Import it after the settings point at the
// stand-ins (the handlers read them at import).
import type { Context } from 'aws-lambda';
import { handler as authHandler } from '#functions/accounts/handler.ts';
import { handler as uploadHandler } from '#functions/files/handler.ts';
import { handler as callbackHandler } from '#functions/payment-callback/handler.ts';
import { handler as paymentsHandler } from '#functions/payments/handler.ts';
import { handler as renderHandler } from '#functions/render/handler.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { createTestAccount, type TestAccount } from './accounts.ts';
import { apiEvent, lambdaContext } from './events.ts';
import { buildEpayNotify, epayNotifyFields } from './fake-gateways/index.ts';
import { buildMultipart, makePatternPng, makePng } from './images.ts';

export type Handler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

export const MAIN_PATHS = [
  'login',
  'me',
  'upload',
  'presign',
  'confirm',
  'order',
  'callback',
  'rendition',
] as const;
export type MainPath = (typeof MAIN_PATHS)[number];

/** One path: untimed preparation (what another request or the client does first), then the request. */
export interface PathRun<Input = unknown> {
  prepare(): Promise<Input>;
  request(input: Input): Promise<ApiResult>;
}

export const CHANNEL_C = { pid: '1001', key: 'main-paths-epay-merchant-key-01' };
export const PLAN_AMOUNT_CENTS = 1230;

export async function call(handler: Handler, event: ApiEvent, expected: number): Promise<ApiResult> {
  const result = await handler(event, lambdaContext);
  if (result.statusCode !== expected) {
    const body = result.isBase64Encoded ? '(binary)' : result.body;
    throw new Error(`${event.routeKey}: expected ${expected}, got ${result.statusCode} ${body}`);
  }
  return result;
}

export function dataOf<T>(result: ApiResult): T {
  return (JSON.parse(result.body ?? '{}') as { data: T }).data;
}

/**
 * A small PNG whose bytes differ every call (a new file, never a dedupe hit), with a layout, so an upload's
 * likeness is looked up in the block list as a photo's is (docs/MODERATION.md).
 */
let pngs = 0;
export function freshPng(): Buffer {
  pngs += 1;
  return makePatternPng(48 + (pngs % 29), 36 + ((pngs >> 5) % 29), pngs * 65_536 + process.pid);
}

/** A new source address per call, as logins of many people come from many addresses. */
let addresses = 0;
export function nextAddress(): string {
  addresses += 1;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

export function uploadEvent(bytes: Buffer, headers: Record<string, string>, sourceIp?: string): ApiEvent {
  const form = buildMultipart([
    { name: 'file', filename: 'shot.png', contentType: 'image/png', data: bytes },
  ]);
  return apiEvent({
    method: 'POST',
    path: '/api/v1/upload',
    body: form.body,
    headers: { ...headers, 'content-type': form.contentType },
    ...(sourceIp ? { sourceIp } : {}),
  });
}

export interface BillingFixtures {
  planId: string;
}

/** A plan and channel_c (EPay) without a reachable API URL, so creating its orders calls nobody. */
export async function billingFixtures(admin: TestAccount): Promise<BillingFixtures> {
  const plan = dataOf<{ id: string }>(
    await call(
      paymentsHandler,
      apiEvent({
        method: 'POST',
        path: '/api/v1/admin/plans',
        headers: admin.headers,
        body: { name: 'Paths plan', amount_cents: PLAN_AMOUNT_CENTS },
      }),
      201,
    ),
  );
  await call(
    paymentsHandler,
    apiEvent({
      method: 'PUT',
      path: '/api/v1/admin/payment',
      headers: admin.headers,
      body: {
        channel_c: {
          enabled: true,
          pid: CHANNEL_C.pid,
          key: CHANNEL_C.key,
          gateway_url: 'http://127.0.0.1:9/',
        },
        current_password: admin.password,
      },
    }),
    200,
  );
  return { planId: plan.id };
}

export function orderEvent(user: TestAccount, planId: string, sourceIp?: string): ApiEvent {
  return apiEvent({
    method: 'POST',
    path: '/api/v1/orders',
    headers: user.headers,
    body: { plan_id: planId, provider: 'channel_c' },
    ...(sourceIp ? { sourceIp } : {}),
  });
}

/** The verified EPay notification that the order was paid in full. */
export function callbackEvent(orderId: string): ApiEvent {
  const notify = buildEpayNotify({
    key: CHANNEL_C.key,
    fields: epayNotifyFields({
      pid: CHANNEL_C.pid,
      out_trade_no: orderId,
      money: (PLAN_AMOUNT_CENTS / 100).toFixed(2),
    }),
  });
  return apiEvent({ method: 'GET', path: `/api/v1/payments/channel_c/callback?${notify.rawQuery}` });
}

export async function settle(orderId: string): Promise<ApiResult> {
  const result = await call(callbackHandler, callbackEvent(orderId), 200);
  if (result.body !== 'success') throw new Error(`callback not settled: ${result.body}`);
  return result;
}

export interface MainPathsOptions {
  /** The bytes of each direct upload (default: a small fresh PNG). */
  uploadBytes?: () => Buffer;
}

/**
 * A user, an administrator's plan and channel settings, and each main path as one request. Call after the
 * stack is provisioned.
 */
export async function mainPaths(options: MainPathsOptions = {}) {
  const [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  const { planId } = await billingFixtures(admin);
  const uploadBytes = options.uploadBytes ?? freshPng;
  const createOrder = async () =>
    dataOf<{ id: string }>(await call(paymentsHandler, orderEvent(user, planId), 201)).id;
  const presignEvent = (bytes: Buffer) =>
    apiEvent({
      method: 'POST',
      path: '/api/v1/upload/presign',
      body: { mime_type: 'image/png', size: bytes.length, filename: 'shot.png' },
      headers: user.headers,
    });

  const paths: { [Path in MainPath]: PathRun<never> } = {
    login: {
      prepare: async () => undefined as never,
      request: () =>
        call(
          authHandler,
          apiEvent({
            method: 'POST',
            path: '/auth/login',
            body: { username: user.account.username, password: user.password },
            sourceIp: nextAddress(),
          }),
          200,
        ),
    },
    me: {
      prepare: async () => undefined as never,
      request: () => call(authHandler, apiEvent({ path: '/auth/me', headers: user.headers }), 200),
    },
    upload: {
      // The event (base64 body) is API Gateway's work: built before the request.
      prepare: async () => uploadEvent(uploadBytes(), user.headers) as never,
      request: (event: ApiEvent) => call(uploadHandler, event, 200),
    } as PathRun<never>,
    presign: {
      prepare: async () => presignEvent(freshPng()) as never,
      request: (event: ApiEvent) => call(uploadHandler, event, 200),
    } as PathRun<never>,
    confirm: {
      // The presign and the client's PUT to S3 come first; confirm is the request measured.
      prepare: async () => {
        const bytes = freshPng();
        const grant = dataOf<{ url: string; method: string; headers: Record<string, string>; key: string }>(
          await call(uploadHandler, presignEvent(bytes), 200),
        );
        const put = await fetch(grant.url, { method: grant.method, body: bytes, headers: grant.headers });
        if (!put.ok) throw new Error(`presigned PUT: ${put.status}`);
        return apiEvent({
          method: 'POST',
          path: '/api/v1/upload/confirm',
          body: { key: grant.key },
          headers: user.headers,
        }) as never;
      },
      request: (event: ApiEvent) => call(uploadHandler, event, 200),
    } as PathRun<never>,
    order: {
      prepare: async () => orderEvent(user, planId) as never,
      request: (event: ApiEvent) => call(paymentsHandler, event, 201),
    } as PathRun<never>,
    callback: {
      prepare: async () => callbackEvent(await createOrder()) as never,
      request: async (event: ApiEvent) => {
        const result = await call(callbackHandler, event, 200);
        if (result.body !== 'success') throw new Error(`callback not settled: ${result.body}`);
        return result;
      },
    } as PathRun<never>,
    rendition: {
      // A file uploaded first; its first rendition is the request measured (later ones are stored copies).
      // Wider than the thumb preset, as photos are: a preset at or over the original's size is the copy of
      // its own size, found or made after one more wait (docs/IMAGES.md).
      prepare: async () => {
        pngs += 1;
        const photo = makePng(640, 360, [pngs & 255, (pngs >> 8) & 255, process.pid & 255]);
        const stored = dataOf<{ key: string }>(
          await call(uploadHandler, uploadEvent(photo, user.headers), 200),
        );
        return apiEvent({ path: `/i/${stored.key}?p=thumb` }) as never;
      },
      request: (event: ApiEvent) => call(renderHandler, event, 200),
    } as PathRun<never>,
  };
  return { user, admin, planId, paths, createOrder };
}
