// At INFO a request writes one line of at most 600 bytes (docs/DESIGN.md 23, docs/OBSERVABILITY.md "The
// access line"): requests driven through the whole handler chain as Lambda runs it (EMF to standard output,
// a sampled trace, a cold start, the business counts of a route), every byte written counted per request.
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { created, ok } from '#lib/http/envelope.ts';
import type { ApiEvent } from '#lib/http/event.ts';
import type { FunctionGroup, RouteKey } from '#lib/http/routes.ts';
import type { HttpResult, Principal } from '#lib/http/types.ts';
import { MAX_REQUEST_LINE_BYTES } from '#lib/platform/log.ts';
import { apiEvent } from '#test/support/events.ts';

const SAMPLED_TRACE = 'Root=1-6740a2b1-5d1f4b7a9e2c1f2e3d4c5b6a;Parent=53995c3f42cd8ad8;Sampled=1';
/** An API Gateway HTTP API request id, as long as they come. */
const REQUEST_ID = 'Zf3kQj1_IAMEb2Q=';
const ADMIN: Principal = { accountId: '01JCDEFGHJKMNPQRSTVWXYZ0AB', role: 'admin', via: 'static_token' };
const USER: Principal = { accountId: '01JCDEFGHJKMNPQRSTVWXYZ0AC', role: 'user', via: 'session' };

/** Every chunk written to standard output: log lines and any EMF document written apart. */
let written: string[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

beforeAll(() => {
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
});
afterAll(() => {
  process.stdout.write = realWrite;
  for (const name of [
    'AWS_EXECUTION_ENV',
    'POWERTOOLS_SERVICE_NAME',
    'POWERTOOLS_METRICS_NAMESPACE',
    '_X_AMZN_TRACE_ID',
  ])
    delete process.env[name];
});

/** The modules of one container a route uses (a fresh module graph: its own metrics, its own errors). */
interface ContainerModules {
  recordMetric: typeof import('#lib/platform/observability/metrics.ts').recordMetric;
  errors: typeof import('#lib/core/errors.ts').errors;
}
type Run = (modules: ContainerModules) => Promise<HttpResult>;

/**
 * One request to a fresh container of `group`, as the stack runs it in prod (infra/operations.ts sets the
 * service name and namespace; Lambda sets the trace): its first, so a cold start. What it wrote, by line.
 */
async function linesOf(
  group: FunctionGroup,
  key: RouteKey,
  run: Run,
  event: ApiEvent,
  options: { principal?: Principal; sampled: boolean; warmFirst?: boolean } = { sampled: true },
): Promise<string[]> {
  Object.assign(process.env, {
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    POWERTOOLS_SERVICE_NAME: group,
    POWERTOOLS_METRICS_NAMESPACE: 'AccountUploadPayment-prod',
  });
  if (options.sampled) process.env._X_AMZN_TRACE_ID = SAMPLED_TRACE;
  else delete process.env._X_AMZN_TRACE_ID;
  vi.resetModules();
  const { configureLogging } = await import('#lib/platform/log.ts');
  const { recordMetric } = await import('#lib/platform/observability/metrics.ts');
  const { errors } = await import('#lib/core/errors.ts');
  const { defineRoute, handlerOverRoutes } = await import('#lib/http/handler.ts');
  configureLogging({ level: 'info', sink: (line) => process.stdout.write(`${line}\n`) });
  const handler = handlerOverRoutes(
    group,
    { [key]: defineRoute({ run: () => run({ recordMetric, errors }) }) },
    {
      authenticate: async () => options.principal,
    },
  );
  const context = { awsRequestId: 'c0a8e3b2-5d1f-4b7a-9e2c-1f2e3d4c5b6a' } as unknown as Context;
  event.requestContext.requestId = REQUEST_ID;
  if (options.warmFirst) await handler(structuredClone(event), context);
  written = [];
  await handler(event, context);
  return written.join('').split('\n').filter(Boolean);
}

const parsed = (line: string) =>
  JSON.parse(line) as Record<string, unknown> & { _aws: { CloudWatchMetrics: unknown[] } };

describe('one line per request at INFO, at most 600 bytes', () => {
  it('holds for the longest lines: cold, sampled, with business counts and every field', async () => {
    const cases = [
      await linesOf(
        'files',
        'POST /api/v1/upload/confirm',
        async () => ok({ id: 'f1', size: 104_857_600 }),
        apiEvent({ method: 'POST', path: '/api/v1/upload/confirm', body: { key: 'k' } }),
        { principal: ADMIN, sampled: true },
      ),
      await linesOf(
        'payments',
        'POST /api/v1/orders',
        async () => created({ id: 'o1', provider: 'channel_c' }),
        apiEvent({ method: 'POST', path: '/api/v1/orders', body: {} }),
        { principal: ADMIN, sampled: true },
      ),
      await linesOf(
        'payment-callback',
        'POST /api/v1/payments/{provider}/callback',
        async ({ recordMetric, errors }) => {
          // The longest reason a refusal is counted under (lib/billing/callbacks.ts keeps 48 characters).
          const reason = 'amount_does_not_match_the_order_and_more_to_say_x';
          recordMetric('CallbacksRefused', { dimensions: { provider: 'channel_b', reason } });
          throw errors.badRequest('refused');
        },
        apiEvent({ method: 'POST', path: '/api/v1/payments/channel_b/callback', body: 'x' }),
      ),
      await linesOf(
        'accounts',
        // The alias runs its route's implementation.
        'POST /admin/auth/passkeys/login/options',
        async () => ok({}),
        apiEvent({ method: 'POST', path: '/api/v1/admin/auth/passkeys/login/options', body: {} }),
      ),
    ];

    for (const lines of cases) {
      expect(lines, lines.join('\n')).toHaveLength(1);
      expect(Buffer.byteLength(`${lines[0]}\n`), lines[0]).toBeLessThanOrEqual(MAX_REQUEST_LINE_BYTES);
    }
    const [upload, order, callback, alias] = cases.map((lines) => parsed(lines[0]!));
    // Each line is the request's EMF document: its metrics are never what gives way.
    expect(upload).toMatchObject({
      message: 'request',
      service: 'files',
      request_id: REQUEST_ID,
      route: 'POST /api/v1/upload/confirm',
      status: 200,
      principal: 'static_token',
      account_id: ADMIN.accountId,
      ColdStart: 1,
      Uploads: 1,
      UploadedBytes: 104_857_600,
    });
    expect(typeof upload!.Latency).toBe('number');
    expect(order).toMatchObject({ status: 201, account_id: ADMIN.accountId, OrdersCreated: 1, ColdStart: 1 });
    expect(callback).toMatchObject({ status: 400, ClientErrors: 1, CallbacksRefused: 1 });
    // An account route under /api/v1 is its route: one series and one shape for both forms.
    expect(alias).toMatchObject({ route: 'POST /admin/auth/passkeys/login/options', status: 200 });
    for (const line of [upload, order, callback, alias])
      expect(line!._aws.CloudWatchMetrics).toEqual([
        expect.objectContaining({
          Namespace: 'AccountUploadPayment-prod',
          Dimensions: [['service', 'route'], ['service']],
        }),
      ]);
  });

  it("keeps every field of an ordinary request, with its points' own dimensions", async () => {
    const lines = await linesOf(
      'payments',
      'POST /api/v1/orders',
      async () => created({ id: 'o1', provider: 'channel_c' }),
      apiEvent({ method: 'POST', path: '/api/v1/orders', body: {} }),
      { principal: USER, sampled: false, warmFirst: true },
    );

    expect(lines).toHaveLength(1);
    const line = parsed(lines[0]!);
    expect(line).toMatchObject({
      level: 'info',
      message: 'request',
      service: 'payments',
      request_id: REQUEST_ID,
      method: 'POST',
      route: 'POST /api/v1/orders',
      status: 201,
      principal: 'session',
      role: 'user',
      account_id: USER.accountId,
      provider: 'channel_c',
      OrdersCreated: 1,
    });
    expect(typeof line.time).toBe('string');
    expect(typeof line.duration_ms).toBe('number');
    // Warm, its trace not sampled, its function its service: none of these says anything.
    for (const silent of ['cold_start', 'xray_trace_id', 'function_request_id', 'function'])
      expect(line, silent).not.toHaveProperty(silent);
  });
});
