// The in-process figures: each path through its group handler (as Lambda calls it) timed side by side
// with the bare storage work it cannot avoid, and the DynamoDB calls each request makes.
// Imported only after bench.ts has pointed the configuration at the stand-ins.

import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as authHandler } from '#functions/accounts/handler.ts';
import { handler as uploadHandler } from '#functions/files/handler.ts';
import { handler as callbackHandler } from '#functions/payment-callback/handler.ts';
import { handler as paymentsHandler } from '#functions/payments/handler.ts';
import { verifyPassword } from '#lib/accounts/passwords.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { buildEpayNotify, epayNotifyFields } from '#test/support/fake-gateways/index.ts';
import { buildMultipart } from '#test/support/images.ts';
import { CHANNEL_C as MAIN_PATHS_CHANNEL_C } from '#test/support/main-paths.ts';
import { median, type PairedResult, paired, repeat, round } from './stats.ts';

type Handler = (event: ApiEvent, context: typeof lambdaContext) => Promise<ApiResult>;

export interface InProcessOptions {
  /** Rounds of the three paired paths, alternating their order; each figure is the median over rounds. */
  rounds: number;
  meIterations: number;
  loginIterations: number;
  uploadIterations: number;
  orderIterations: number;
}

export interface PathFigures {
  /** Medians over the rounds of each round's p50. */
  p50_ms: number;
  baseline_p50_ms: number;
  /** The median of the rounds' ratios. */
  ratio: number;
  /** Iterations per round. */
  iterations: number;
  round_ratios: number[];
}

export interface UploadFigures extends PathFigures {
  file_bytes: number;
  /** CPU time (user + system) of this process during one upload request, median over all rounds. */
  cpu_ms: number;
  /** The same for the baseline (SHA-256 + PutObject). */
  baseline_cpu_ms: number;
}

export interface CallCounts {
  dynamodb: number;
  s3: number;
  /** DynamoDB operations by name, e.g. { BatchGetItem: 1 } */
  operations: Record<string, number>;
}

export interface InProcessReport {
  me: PathFigures;
  login: PathFigures;
  upload: UploadFigures;
  order_create_p50_ms: number;
  callback_settlement_p50_ms: number;
  round_trips: Record<'me' | 'login' | 'upload' | 'order_create' | 'callback_settlement', CallCounts>;
}

/** A file just at upload.max_bytes: a real PNG container and size, its image data random bytes. */
export const UPLOAD_BYTES = 4 * 1024 * 1024;
// The same merchant as the main paths' (test/support/main-paths.ts): the callback function caches the
// payment settings for 30 s, so a second key saved later in this process would not reach it in time.
const CHANNEL_C = MAIN_PATHS_CHANNEL_C;

export function pngOf(size: number): Buffer {
  const u32 = (value: number) => {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(value >>> 0);
    return out;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    return Buffer.concat([u32(data.length), body, u32(crc32(body))]);
  };
  const head = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', Buffer.concat([u32(1024), u32(1024), Buffer.from([8, 2, 0, 0, 0])])),
  ]);
  const end = chunk('IEND', Buffer.alloc(0));
  // One image-data chunk of random bytes makes up the size (12 bytes of chunk framing): a well-formed
  // container with nothing for the metadata stripper to remove, so the bench times the usual path.
  const filler = chunk('IDAT', randomBytes(size - head.length - end.length - 12));
  return Buffer.concat([head, filler, end]);
}

/** Distinct bytes per iteration (a fresh upload, not a dedupe hit); the chunk CRC is not checked. */
export function varied(base: Buffer, iteration: number): Buffer {
  const copy = Buffer.from(base);
  copy.writeUInt32BE(iteration, 33 + 8);
  copy.writeUInt32BE(process.pid, 33 + 12);
  return copy;
}

/** Counts SDK calls per request by a middleware on each client's own stack. */
class CallCounter {
  private dynamo: Record<string, number> = {};
  private s3 = 0;

  install(): void {
    dynamoClient(config.aws).middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        this.dynamo[name] = (this.dynamo[name] ?? 0) + 1;
        return next(args);
      },
      { step: 'initialize', name: 'benchDynamoCallCounter' },
    );
    s3Client(config.aws).middlewareStack.add(
      (next) => async (args) => {
        this.s3 += 1;
        return next(args);
      },
      { step: 'initialize', name: 'benchS3CallCounter' },
    );
  }

  uninstall(): void {
    dynamoClient(config.aws).middlewareStack.remove('benchDynamoCallCounter');
    s3Client(config.aws).middlewareStack.remove('benchS3CallCounter');
  }

  async count(run: () => Promise<unknown>): Promise<CallCounts> {
    this.dynamo = {};
    this.s3 = 0;
    await run();
    const operations = this.dynamo;
    return {
      dynamodb: Object.values(operations).reduce((sum, n) => sum + n, 0),
      s3: this.s3,
      operations,
    };
  }
}

async function call(handler: Handler, event: ApiEvent, expected: number): Promise<ApiResult> {
  const result = await handler(event, lambdaContext);
  if (result.statusCode !== expected) {
    const body = result.isBase64Encoded ? '(binary)' : result.body;
    throw new Error(`${event.routeKey}: expected ${expected}, got ${result.statusCode} ${body}`);
  }
  return result;
}

function dataOf<T>(result: ApiResult): T {
  return (JSON.parse(result.body ?? '{}') as { data: T }).data;
}

/** One path's rounds as one figure: medians over the rounds (an odd number of them). */
function figures(rounds: PairedResult[]): PathFigures {
  return {
    p50_ms: round(median(rounds.map((result) => median(result.subject))), 3),
    baseline_p50_ms: round(median(rounds.map((result) => median(result.baseline))), 3),
    ratio: round(median(rounds.map((result) => result.ratio)), 3),
    iterations: rounds[0]?.subject.length ?? 0,
    round_ratios: rounds.map((result) => round(result.ratio, 3)),
  };
}

/** CPU milliseconds (user + system) this process spends in `run`. */
async function cpuMs(samples: number[], run: () => Promise<unknown>): Promise<void> {
  const started = process.cpuUsage();
  await run();
  const used = process.cpuUsage(started);
  samples.push((used.user + used.system) / 1000);
}

export async function runInProcess(options: InProcessOptions): Promise<InProcessReport> {
  const table = config.table_name;
  const bucket = config.bucket_name;
  const user = await createTestAccount();
  const admin = await createTestAccount({ role: 'admin' });
  const getAccount = () =>
    dynamoClient(config.aws).send(new GetCommand({ TableName: table, Key: accountKey(user.account.id) }));

  // Fixtures: a plan, channel_c (EPay) without its API URL, so creating its orders calls nobody.
  const plan = dataOf<{ id: string }>(
    await call(
      paymentsHandler,
      apiEvent({
        method: 'POST',
        path: '/api/v1/admin/plans',
        headers: admin.headers,
        body: { name: 'Bench plan', amount_cents: 1230 },
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

  const meEvent = () => apiEvent({ path: '/auth/me', headers: user.headers });
  let loginIp = 0;
  // A new source address each time: the per-IP limit still runs (its write is counted), never refuses.
  const loginEvent = () =>
    apiEvent({
      method: 'POST',
      path: '/auth/login',
      body: { username: user.account.username, password: user.password },
      sourceIp: `10.${(++loginIp >> 16) & 255}.${(loginIp >> 8) & 255}.${loginIp & 255}`,
    });
  const basePng = pngOf(UPLOAD_BYTES);
  const uploadEvent = (bytes: Buffer, owner: TestAccount) => {
    const form = buildMultipart([
      { name: 'file', filename: 'bench.png', contentType: 'image/png', data: bytes },
    ]);
    return apiEvent({
      method: 'POST',
      path: '/api/v1/upload',
      body: form.body,
      headers: { ...owner.headers, 'content-type': form.contentType },
    });
  };
  const createOrder = async (provider?: string) =>
    dataOf<{ id: string }>(
      await call(
        paymentsHandler,
        apiEvent({
          method: 'POST',
          path: '/api/v1/orders',
          headers: user.headers,
          body: { plan_id: plan.id, ...(provider ? { provider } : {}) },
        }),
        201,
      ),
    );
  const settleEvent = (orderId: string) => {
    const notify = buildEpayNotify({
      key: CHANNEL_C.key,
      fields: epayNotifyFields({ pid: CHANNEL_C.pid, out_trade_no: orderId, money: '12.30' }),
    });
    return apiEvent({ method: 'GET', path: `/api/v1/payments/channel_c/callback?${notify.rawQuery}` });
  };
  const settle = async (orderId: string) => {
    const result = await call(callbackHandler, settleEvent(orderId), 200);
    if (result.body !== 'success') throw new Error(`callback not settled: ${result.body}`);
  };

  // Warm every path once (token key, settings, lazy clients), then count calls per request.
  let uploads = 0;
  await call(authHandler, meEvent(), 200);
  await call(authHandler, loginEvent(), 200);
  await call(uploadHandler, uploadEvent(varied(basePng, ++uploads), user), 200);
  await settle((await createOrder('channel_c')).id);

  const counter = new CallCounter();
  counter.install();
  let pendingOrder = '';
  const round_trips = {
    me: await counter.count(() => call(authHandler, meEvent(), 200)),
    login: await counter.count(() => call(authHandler, loginEvent(), 200)),
    upload: await counter.count(() =>
      call(uploadHandler, uploadEvent(varied(basePng, ++uploads), user), 200),
    ),
    order_create: await counter.count(async () => {
      pendingOrder = (await createOrder('channel_c')).id;
    }),
    callback_settlement: await counter.count(() => settle(pendingOrder)),
  };
  counter.uninstall();

  const storedHash = (user.account as { password_hash: string }).password_hash;
  const uploadCpu: number[] = [];
  const baselineCpu: number[] = [];
  const measure = {
    me: () =>
      paired({
        iterations: options.meIterations,
        warmup: 100,
        prepare: meEvent,
        subject: (event) => call(authHandler, event, 200),
        baseline: () => getAccount(),
      }),
    login: () =>
      paired({
        iterations: options.loginIterations,
        warmup: 5,
        prepare: loginEvent,
        subject: (event) => call(authHandler, event, 200),
        baseline: async () => {
          if (!(await verifyPassword(storedHash, user.password))) throw new Error('verify failed');
          await getAccount();
        },
      }),
    // Events are built before timing (API Gateway's work, not ours); the bytes differ every time.
    upload: () =>
      paired({
        iterations: options.uploadIterations,
        warmup: 3,
        prepare: () => {
          const bytes = varied(basePng, ++uploads);
          return { bytes, event: uploadEvent(bytes, user) };
        },
        subject: ({ event }) => cpuMs(uploadCpu, () => call(uploadHandler, event, 200)),
        baseline: ({ bytes }) =>
          cpuMs(baselineCpu, async () => {
            const digest = createHash('sha256').update(bytes).digest('hex');
            await s3Client(config.aws).send(
              new PutObjectCommand({
                Bucket: bucket,
                Key: `bench/${digest}.png`,
                Body: bytes,
                ContentLength: bytes.length,
                ContentType: 'image/png',
              }),
            );
          }),
      }),
  };
  // Rounds alternate the order of the paths, so a drift of the machine during the run hits each alike.
  const results: Record<keyof typeof measure, PairedResult[]> = { me: [], login: [], upload: [] };
  for (let index = 0; index < options.rounds; index++) {
    const order: Array<keyof typeof measure> =
      index % 2 === 0 ? ['me', 'login', 'upload'] : ['upload', 'login', 'me'];
    for (const path of order) results[path].push(await measure[path]());
  }

  const orders: string[] = [];
  const orderCreate = await repeat(options.orderIterations, 5, async () => {
    orders.push((await createOrder('channel_c')).id);
  });
  const settlement = await repeat(Math.min(options.orderIterations, orders.length - 5), 5, () =>
    settle(orders.shift()!),
  );

  return {
    me: figures(results.me),
    login: figures(results.login),
    upload: {
      ...figures(results.upload),
      file_bytes: UPLOAD_BYTES,
      cpu_ms: round(median(uploadCpu), 2),
      baseline_cpu_ms: round(median(baselineCpu), 2),
    },
    order_create_p50_ms: round(median(orderCreate), 3),
    callback_settlement_p50_ms: round(median(settlement), 3),
    round_trips,
  };
}
