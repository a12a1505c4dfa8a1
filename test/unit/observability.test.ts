// Logs, metrics and the request id (docs/OBSERVABILITY.md): one access line per request with its ids and
// never a credential, `x-request-id` on every answer equal to the logged id, the request's EMF document (its
// access line) with the business counts a route's outcome implies, 5xx counted, metrics written once per
// invocation.
import type { Context } from 'aws-lambda';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errors } from '#lib/core/errors.ts';
import { created, ok } from '#lib/http/envelope.ts';
import type { ApiEvent } from '#lib/http/event.ts';
import { type Authenticator, defineRoute, handlerOverRoutes } from '#lib/http/handler.ts';
import { configureLogging, log, tapLogging, withLogContext } from '#lib/platform/log.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { configureMetrics, DEFAULT_NAMESPACE, recordMetric } from '#lib/platform/observability/metrics.ts';
import * as z from '#lib/platform/zod.ts';
import { apiEvent, parseBody } from '#test/support/events.ts';

const SESSION_TOKEN = 'session-token-for-observability-0001';
const API_TOKEN = 'ut_observability-api-token-0000000000000000000000';

const authenticate: Authenticator = async (request, kind) => {
  if (kind === 'none') return undefined;
  const bearer = request.headers.authorization;
  if (bearer === `Bearer ${SESSION_TOKEN}`) return { accountId: 'acct-1', role: 'user', via: 'session' };
  if (bearer === `Bearer ${API_TOKEN}` && kind === 'uploader')
    return { accountId: 'acct-2', role: 'user', via: 'api_token' };
  throw errors.unauthorized();
};

/** What the real login answers: a session, or a TOTP challenge (lib/http/schemas/account-views.ts). */
const login = defineRoute({
  body: z.object({ username: z.string(), password: z.string() }),
  run: async (request) => {
    if (request.body.password !== 'right') throw errors.unauthorized('Invalid credentials');
    if (request.body.username === 'totp-user')
      return ok({ totp_required: true, challenge_token: 'challenge', expires_at: 'later' });
    return ok({ token: 'issued', token_type: 'Bearer', expires_at: 'later', user: {} });
  },
});

let insideRequest: () => void = () => undefined;

const auth = handlerOverRoutes(
  'accounts',
  {
    'POST /auth/login': login,
    'POST /admin/auth/login': login,
    'POST /auth/totp/verify': defineRoute({
      run: async () => {
        throw errors.unauthorized('Invalid code');
      },
    }),
    'GET /auth/me': defineRoute({
      run: async (request) => {
        insideRequest();
        return ok({ id: request.principal?.accountId });
      },
    }),
    'POST /auth/register': defineRoute({
      run: async () => {
        throw new Error('the table is gone');
      },
    }),
    'POST /auth/logout': defineRoute({
      run: async () => {
        throw errors.tooManyRequests(7);
      },
    }),
  },
  { authenticate },
);

const upload = handlerOverRoutes(
  'files',
  {
    'POST /api/v1/upload/confirm': defineRoute({
      run: async () => ok({ id: 'f1', size: 1234, key: 'k' }),
    }),
  },
  { authenticate },
);

const payments = handlerOverRoutes(
  'payments',
  {
    'POST /api/v1/orders': defineRoute({
      successStatus: 201,
      run: async () => created({ id: 'o1', provider: 'channel_c', status: 'pending' }),
    }),
  },
  { authenticate },
);

interface Line extends Record<string, unknown> {
  level: string;
  message: string;
}

interface EmfDocument extends Record<string, unknown> {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
}

let lines: string[] = [];
let documents: EmfDocument[] = [];

beforeAll(() => {
  configureLogging({ level: 'info', sink: (line) => lines.push(line) });
  configureMetrics({ sink: (document) => documents.push(JSON.parse(document) as EmfDocument) });
});
beforeEach(() => {
  lines = [];
  documents = [];
});

const parsed = () => lines.map((line) => JSON.parse(line) as Line);
const accessLines = () => parsed().filter((line) => line.message === 'request');

let invocation = 0;
function contextFor(): Context {
  invocation += 1;
  return {
    awsRequestId: `lambda-request-${invocation}`,
    getRemainingTimeInMillis: () => 30_000,
  } as unknown as Context;
}

/** The documents carrying `name`, with the value of `name` in each. */
function valuesOf(name: string, dimensions?: Record<string, string>): unknown[] {
  return documents
    .filter((document) => name in document)
    .filter((document) => Object.entries(dimensions ?? {}).every(([key, value]) => document[key] === value))
    .map((document) => document[name]);
}

describe('the access line and x-request-id', () => {
  it('writes exactly one access line per request, with its route, status, ids and principal, never the token', async () => {
    const event = apiEvent({
      method: 'GET',
      path: '/auth/me',
      headers: { authorization: `Bearer ${SESSION_TOKEN}` },
    });
    const context = contextFor();

    const result = await auth(event, context);

    expect(result.statusCode).toBe(200);
    const access = accessLines();
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: 'info',
      message: 'request',
      method: 'GET',
      route: 'GET /auth/me',
      status: 200,
      request_id: event.requestContext.requestId,
      function: 'accounts',
      principal: 'session',
      role: 'user',
      account_id: 'acct-1',
    });
    expect(typeof access[0]!.duration_ms).toBe('number');
    // Lambda's own id only where no request id finds the lines (a worker's).
    expect(access[0]).not.toHaveProperty('function_request_id');
    expect(context.awsRequestId).toBeDefined();
    expect(lines.join('\n')).not.toContain(SESSION_TOKEN);
  });

  it('names an API token caller by its kind, never its value', async () => {
    const event = apiEvent({
      method: 'POST',
      path: '/api/v1/upload/confirm',
      body: { key: 'k' },
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });

    await upload(event, contextFor());

    expect(accessLines()).toEqual([expect.objectContaining({ principal: 'api_token', status: 200 })]);
    expect(lines.join('\n')).not.toContain(API_TOKEN);
  });

  it('answers x-request-id equal to the logged request id on success, error, 5xx and 404 answers', async () => {
    const cases: Array<[ApiEvent, number]> = [
      [
        apiEvent({ method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${SESSION_TOKEN}` } }),
        200,
      ],
      [apiEvent({ method: 'GET', path: '/auth/me' }), 401],
      [apiEvent({ method: 'POST', path: '/auth/login', body: '{"username":' }), 400],
      [apiEvent({ method: 'POST', path: '/auth/register', body: {} }), 500],
      [apiEvent({ method: 'GET', path: '/no/such/path' }), 404],
    ];
    for (const [event, status] of cases) {
      lines = [];
      const result = await auth(event, contextFor());
      expect(result.statusCode).toBe(status);
      const header = (result.headers as Record<string, string>)['x-request-id'];
      expect(header).toBe(event.requestContext.requestId);
      const access = accessLines();
      expect(access).toHaveLength(1);
      expect(access[0]!.request_id).toBe(header);
      expect(access[0]!.status).toBe(status);
      // Every line of the request carries the id, the error line of the 5xx included.
      for (const line of parsed()) expect(line.request_id).toBe(header);
    }
    expect(accessLines()[0]!.route).toBe('unmatched');
  });

  it("answers Lambda's request id when the event carries none, and a fresh one when neither exists", async () => {
    const event = apiEvent({ method: 'GET', path: '/no/such/path' });
    (event.requestContext as { requestId?: string }).requestId = undefined;
    const context = contextFor();

    const fromLambda = await auth(event, context);
    const generated = await auth(event, { getRemainingTimeInMillis: () => 1 } as unknown as Context);

    expect((fromLambda.headers as Record<string, string>)['x-request-id']).toBe(context.awsRequestId);
    const fresh = (generated.headers as Record<string, string>)['x-request-id'];
    expect(fresh).toMatch(/^[0-9a-f-]{36}$/);
    expect(accessLines().map((line) => line.request_id)).toEqual([context.awsRequestId, fresh]);
  });

  it('marks only the first invocation of a function as a cold start', async () => {
    const group = handlerOverRoutes(
      'meta',
      { 'GET /healthz': defineRoute({ run: async () => ok({}) }) },
      {
        authenticate,
      },
    );

    await group(apiEvent({ method: 'GET', path: '/healthz' }), contextFor());
    await group(apiEvent({ method: 'GET', path: '/healthz' }), contextFor());

    expect(accessLines().map((line) => line.cold_start)).toEqual([true, undefined]);
    expect(valuesOf('ColdStart', { function_name: 'meta' })).toEqual([1]);
  });
});

describe('request metrics (EMF)', () => {
  it('writes Latency per route (its count is the requests), and the same under service alone', async () => {
    await auth(
      apiEvent({ method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${SESSION_TOKEN}` } }),
      contextFor(),
    );

    const document = documents.find((candidate) => candidate.route === 'GET /auth/me');
    expect(document).toBeDefined();
    const [directive] = document!._aws.CloudWatchMetrics;
    expect(directive!.Namespace).toBe(DEFAULT_NAMESPACE);
    expect(directive!.Dimensions).toEqual([['service', 'route'], ['service']]);
    expect(directive!.Metrics).toContainEqual({ Name: 'Latency', Unit: 'Milliseconds' });
    // The errors only when there is one: their sum over Latency's sample count is the rate.
    expect(document).not.toHaveProperty('ClientErrors');
    expect(document).not.toHaveProperty('ServerErrors');
    expect(typeof document!.Latency).toBe('number');
  });

  it('counts a 5xx answer as a server error of its route (Lambda sees no error: the chain answered)', async () => {
    const result = await auth(apiEvent({ method: 'POST', path: '/auth/register', body: {} }), contextFor());

    expect(result.statusCode).toBe(500);
    expect(valuesOf('ServerErrors', { route: 'POST /auth/register' })).toEqual([1]);
    expect(valuesOf('ClientErrors', { route: 'POST /auth/register' })).toEqual([]);
  });

  it('counts 4xx answers as client errors, and a 404 under the route `unmatched`, never its path', async () => {
    await auth(apiEvent({ method: 'GET', path: '/auth/me' }), contextFor());
    await auth(apiEvent({ method: 'GET', path: '/no/such/path/12345' }), contextFor());

    expect(valuesOf('ClientErrors', { route: 'GET /auth/me' })).toEqual([1]);
    expect(valuesOf('ClientErrors', { route: 'unmatched' })).toEqual([1]);
    expect(JSON.stringify(documents)).not.toContain('12345');
  });

  it('writes the points of an invocation once it has answered, not while it runs', async () => {
    let writtenWhileRunning = -1;
    insideRequest = () => {
      recordMetric('Probe', { dimensions: { route: 'GET /auth/me' } });
      writtenWhileRunning = documents.length;
    };
    try {
      await auth(
        apiEvent({ method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${SESSION_TOKEN}` } }),
        contextFor(),
      );
    } finally {
      insideRequest = () => undefined;
    }

    expect(writtenWhileRunning).toBe(0);
    // The probe shares its dimensions with the request metrics: one document for both.
    const withProbe = documents.filter((document) => 'Probe' in document);
    expect(withProbe).toHaveLength(1);
    expect(withProbe[0]).toMatchObject({ Probe: 1, route: 'GET /auth/me' });
    expect(typeof withProbe[0]!.Latency).toBe('number');
  });
});

describe('business counts derived from route outcomes', () => {
  const loginEvent = (path: string, username: string, password: string) =>
    apiEvent({ method: 'POST', path, body: { username, password } });

  it('counts logins, TOTP challenges and failed logins per route, with or without the /api/v1 prefix', async () => {
    await auth(loginEvent('/auth/login', 'ann', 'right'), contextFor());
    await auth(loginEvent('/api/v1/auth/login', 'ann', 'right'), contextFor());
    await auth(loginEvent('/auth/login', 'totp-user', 'right'), contextFor());
    await auth(loginEvent('/auth/login', 'ann', 'wrong'), contextFor());
    await auth(loginEvent('/admin/auth/login', 'root', 'wrong'), contextFor());

    expect(valuesOf('Logins', { route: 'POST /auth/login' })).toEqual([1, 1]);
    expect(valuesOf('LoginChallenges', { route: 'POST /auth/login' })).toEqual([1]);
    expect(valuesOf('LoginsFailed', { route: 'POST /auth/login' })).toEqual([1]);
    expect(valuesOf('LoginsFailed', { route: 'POST /admin/auth/login' })).toEqual([1]);
  });

  it('counts failed TOTP codes and throttled requests', async () => {
    await auth(apiEvent({ method: 'POST', path: '/auth/totp/verify', body: {} }), contextFor());
    await auth(
      apiEvent({
        method: 'POST',
        path: '/auth/logout',
        body: {},
        headers: { authorization: `Bearer ${SESSION_TOKEN}` },
      }),
      contextFor(),
    );

    expect(valuesOf('TotpFailures')).toEqual([1]);
    expect(valuesOf('Throttled', { route: 'POST /auth/logout' })).toEqual([1]);
  });

  it('counts uploads with their bytes, and orders created per provider', async () => {
    await upload(
      apiEvent({
        method: 'POST',
        path: '/api/v1/upload/confirm',
        body: { key: 'k' },
        headers: { authorization: `Bearer ${SESSION_TOKEN}` },
      }),
      contextFor(),
    );
    await payments(
      apiEvent({
        method: 'POST',
        path: '/api/v1/orders',
        body: {},
        headers: { authorization: `Bearer ${SESSION_TOKEN}` },
      }),
      contextFor(),
    );

    expect(valuesOf('Uploads', { route: 'POST /api/v1/upload/confirm' })).toEqual([1]);
    const bytes = documents.find((document) => 'UploadedBytes' in document);
    expect(bytes?.UploadedBytes).toBe(1234);
    expect(bytes?._aws.CloudWatchMetrics[0]?.Metrics).toContainEqual({
      Name: 'UploadedBytes',
      Unit: 'Bytes',
    });
    expect(valuesOf('OrdersCreated', { provider: 'channel_c' })).toEqual([1]);
  });

  it('counts nothing of the kind when the route failed', async () => {
    await upload(
      apiEvent({ method: 'POST', path: '/api/v1/upload/confirm', body: { key: 'k' } }),
      contextFor(),
    );

    expect(valuesOf('Uploads')).toEqual([]);
    expect(valuesOf('UploadedBytes')).toEqual([]);
  });
});

describe('metrics outside a request, and worker invocations', () => {
  afterEach(() => tapLogging(undefined));

  it('writes a point recorded outside any invocation at once', () => {
    recordMetric('OrdersPaid', { dimensions: { provider: 'mock' } });

    expect(documents).toHaveLength(1);
    expect(documents[0]).toMatchObject({ OrdersPaid: 1, provider: 'mock' });
    expect(documents[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([
      ['service', 'provider'],
      ['service'],
    ]);
  });

  it('never fails the caller over a metric it cannot write', () => {
    expect(() => recordMetric('', { value: 1 })).not.toThrow();
    expect(parsed().some((line) => line.level === 'warn' && line.message === 'metrics not written')).toBe(
      true,
    );
  });

  it('gives a worker invocation its ids and cold start on every line, and writes its metrics once at the end', async () => {
    const worker = observeInvocation('outbox-drain', async (event: { records: number }) => {
      log.info('draining', { records: event.records });
      recordMetric('OutboxDelivered', { value: event.records });
      recordMetric('OutboxDelivered', { value: 1 });
      return { batchItemFailures: [] };
    });
    const context = contextFor();

    await worker({ records: 2 }, context);

    expect(parsed().find((line) => line.message === 'draining')).toMatchObject({
      function: 'outbox-drain',
      function_request_id: context.awsRequestId,
      cold_start: true,
    });
    // Two points of one metric in one document.
    expect(valuesOf('OutboxDelivered')).toEqual([[2, 1]]);
  });

  it('logs a worker failure and rethrows it, so Lambda counts the error', async () => {
    const worker = observeInvocation('reconciler', async () => {
      throw new Error('channel query exploded');
    });

    await expect(worker({}, contextFor())).rejects.toThrow('channel query exploded');
    expect(parsed()).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'invocation failed', function: 'reconciler' }),
    );
  });
});

describe('log lines through Powertools Logger', () => {
  afterEach(() => {
    tapLogging(undefined);
    configureLogging({ level: 'info' });
  });

  it('keeps the line shape and redacts secret-looking fields at any depth', () => {
    withLogContext({ requestId: 'req-1', function: 'accounts' }, () =>
      log.warn('something', { password: 'pw', nested: { api_token: 't', fine: 1 }, count: 2 }),
    );

    const [line] = parsed();
    expect(Object.keys(line!).slice(0, 3)).toEqual(['level', 'time', 'message']);
    expect(line).toMatchObject({
      level: 'warn',
      message: 'something',
      function: 'accounts',
      request_id: 'req-1',
      password: '[redacted]',
      nested: { api_token: '[redacted]', fine: 1 },
      count: 2,
    });
    expect(line!.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('hands every level to the tap while the sink shows only the configured level', () => {
    const tapped: string[] = [];
    configureLogging({ level: 'warn' });
    tapLogging((line) => tapped.push(line));

    log.debug('quiet detail');
    log.info('routine');
    log.error('loud');

    expect(parsed().map((line) => line.message)).toEqual(['loud']);
    expect(tapped.map((line) => (JSON.parse(line) as Line).message)).toEqual([
      'quiet detail',
      'routine',
      'loud',
    ]);
  });

  it('carries the X-Ray trace id of the invocation when Lambda provides one', () => {
    const previous = process.env._X_AMZN_TRACE_ID;
    process.env._X_AMZN_TRACE_ID =
      'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1';
    try {
      log.info('traced');
    } finally {
      if (previous === undefined) delete process.env._X_AMZN_TRACE_ID;
      else process.env._X_AMZN_TRACE_ID = previous;
    }
    log.info('untraced');

    const [traced, untraced] = parsed();
    expect(traced!.xray_trace_id).toBe('1-67891233-abcdef012345678912345678');
    expect(untraced!.xray_trace_id).toBeUndefined();
  });

  it('writes the error of a line with its name, message and cause', () => {
    log.error('failed', { error: new Error('outer', { cause: new TypeError('inner') }) });

    expect(parsed()[0]!.error).toMatchObject({
      name: 'Error',
      message: 'outer',
      cause: { name: 'TypeError', message: 'inner' },
    });
  });
});

describe('the answer body', () => {
  it('is unchanged by the observation (envelope as before)', async () => {
    const result = await auth(
      apiEvent({ method: 'GET', path: '/auth/me', headers: { authorization: `Bearer ${SESSION_TOKEN}` } }),
      contextFor(),
    );
    expect(parseBody(result)).toEqual({ code: 0, message: 'ok', data: { id: 'acct-1' } });
  });
});
