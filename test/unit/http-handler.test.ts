import { describe, expect, it } from 'vitest';
import { errors } from '#lib/core/errors.ts';
import { ok } from '#lib/http/envelope.ts';
import { type Authenticator, defineRoute, handlerOverRoutes, noCredentials } from '#lib/http/handler.ts';
import * as z from '#lib/platform/zod.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';

const authenticate: Authenticator = async (request, kind) => {
  if (kind === 'none') return undefined;
  if (request.headers.authorization !== 'Bearer good') throw errors.unauthorized();
  return { accountId: 'a1', role: 'user', via: 'session' };
};

const handler = handlerOverRoutes(
  'accounts',
  {
    'POST /auth/login': defineRoute({
      body: z.object({
        username: z.string().check(z.minLength(1), z.maxLength(64)),
        password: z.string().check(z.minLength(1)),
      }),
      run: async (request) => ok({ hello: request.body.username }),
    }),
    'GET /auth/me': defineRoute({ run: async (request) => ok({ id: request.principal?.accountId }) }),
    'POST /auth/register': defineRoute({
      run: async () => {
        throw new Error('database password is hunter2');
      },
    }),
    'POST /auth/password': defineRoute({
      run: async () => {
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
          name: 'ProvisionedThroughputExceededException',
        });
      },
    }),
    'POST /auth/email/unbind': defineRoute({
      run: async () => {
        throw Object.assign(new Error('We encountered an internal error. Please try again.'), {
          name: 'InternalError',
          $fault: 'server',
          $metadata: { httpStatusCode: 500 },
        });
      },
    }),
    'POST /auth/logout': defineRoute({
      run: async () => {
        throw errors.tooManyRequests(42);
      },
    }),
  },
  { authenticate },
);

async function call(input: Parameters<typeof apiEvent>[0]) {
  const result = await handler(apiEvent(input), lambdaContext);
  return { result, body: parseBody(result) as { code: number; message: string; data: unknown } };
}

describe('the handler chain', () => {
  it('answers a valid request with the ok envelope and the security headers', async () => {
    const { result, body } = await call({
      method: 'POST',
      path: '/auth/login',
      body: { username: 'ann', password: 'x' },
    });
    expect(result.statusCode).toBe(200);
    expect(body).toEqual({ code: 0, message: 'ok', data: { hello: 'ann' } });
    expect(result.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
  });

  it('answers malformed JSON with a 400 envelope', async () => {
    const { result, body } = await call({ method: 'POST', path: '/auth/login', body: '{"username": "ann",' });
    expect(result.statusCode).toBe(400);
    expect(body).toEqual({ code: 400, message: 'Request body is not valid JSON', data: null });
    expect(result.headers?.['x-content-type-options']).toBe('nosniff');
  });

  it('names the missing or mistyped field', async () => {
    const missing = await call({ method: 'POST', path: '/auth/login', body: { username: 'ann' } });
    expect(missing.result.statusCode).toBe(400);
    expect(missing.body.message).toMatch(/^password:/);
    const mistyped = await call({
      method: 'POST',
      path: '/auth/login',
      body: { username: 7, password: 'x' },
    });
    expect(mistyped.body.message).toMatch(/^username:/);
    expect(mistyped.body.data).toEqual({ fields: [{ field: 'username', message: expect.any(String) }] });
    const array = await call({ method: 'POST', path: '/auth/login', body: '[1,2]' });
    expect(array.result.statusCode).toBe(400);
  });

  it('rejects an over-long JSON body with 413', async () => {
    const { result } = await call({
      method: 'POST',
      path: '/auth/login',
      body: { username: 'a'.repeat(70_000) },
    });
    expect(result.statusCode).toBe(413);
  });

  it('turns an unknown error into a 500 envelope without its message', async () => {
    const { result, body } = await call({ method: 'POST', path: '/auth/register', body: {} });
    expect(result.statusCode).toBe(500);
    expect(body).toEqual({ code: 500, message: 'Internal server error', data: null });
    expect(result.body).not.toContain('hunter2');
  });

  it('answers a throttled dependency with 503 and Retry-After, not a 500', async () => {
    const { result, body } = await call({
      method: 'POST',
      path: '/auth/password',
      body: {},
      headers: { authorization: 'Bearer good' },
    });
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after']).toBe('1');
    expect(body.message).not.toContain('throughput');
  });

  it('answers an AWS service fault (S3 InternalError) with 503, not a 500', async () => {
    const { result, body } = await call({
      method: 'POST',
      path: '/auth/email/unbind',
      body: {},
      headers: { authorization: 'Bearer good' },
    });
    expect(result.statusCode).toBe(503);
    expect(body.message).not.toContain('internal error');
  });

  it('answers a route of another group or no route with a 404 envelope', async () => {
    const other = await call({ method: 'GET', path: '/api/v1/plans' });
    expect(other.result.statusCode).toBe(404);
    const none = await call({ method: 'GET', path: '/no/such/thing' });
    expect(none.body).toMatchObject({ code: 404, data: null });
  });

  it('answers a route of this group without an implementation with 501', async () => {
    const { result, body } = await call({ method: 'GET', path: '/auth/security' });
    expect(result.statusCode).toBe(501);
    expect(body.code).toBe(501);
  });

  it('runs authentication before the route and passes the principal', async () => {
    expect((await call({ path: '/auth/me' })).result.statusCode).toBe(401);
    const { body } = await call({ path: '/auth/me', headers: { Authorization: 'Bearer good' } });
    expect(body.data).toEqual({ id: 'a1' });
  });

  it('checks credentials before reading the body', async () => {
    const { result } = await call({ method: 'POST', path: '/auth/logout', body: '{not json' });
    expect(result.statusCode).toBe(401);
  });

  it('sends Retry-After with a 429', async () => {
    const { result, body } = await call({
      method: 'POST',
      path: '/auth/logout',
      body: {},
      headers: { authorization: 'Bearer good' },
    });
    expect(result.statusCode).toBe(429);
    expect(result.headers?.['retry-after']).toBe('42');
    expect(body.data).toEqual({ retry_after: 42 });
  });

  it('refuses to build a group with a route the table gives to another group', () => {
    expect(() =>
      handlerOverRoutes(
        'meta',
        { 'POST /auth/login': defineRoute({ run: async () => ok(null) }) },
        { authenticate },
      ),
    ).toThrow(/not a meta route/);
  });

  it('refuses to build a group without an authenticator when one of its routes takes credentials', () => {
    // Act
    const build = () =>
      handlerOverRoutes(
        'accounts',
        { 'GET /auth/me': defineRoute({ run: async () => ok(null) }) },
        { authenticate: noCredentials },
      );

    // Assess
    expect(build).toThrow(/GET \/auth\/me takes session credentials/);
  });

  it('serves the routes that take no credentials without an authenticator', async () => {
    // Prepare
    const files = handlerOverRoutes(
      'meta',
      { 'GET /healthz': defineRoute({ run: async () => ok({ status: 'ok' }) }) },
      { authenticate: noCredentials },
    );

    // Act
    const result = await files(apiEvent({ path: '/healthz' }), lambdaContext);

    // Assess
    expect(result.statusCode).toBe(200);
    expect(parseBody(result)).toEqual({ code: 0, message: 'ok', data: { status: 'ok' } });
  });
});

describe('client address', () => {
  // Behind the CDN the front door (lib/http/front-door.ts, test/unit/front-door.test.ts) believes the viewer
  // address the CDN names; without it no claim in a header is believed, and routes see none of them.
  const plainHandler = handlerOverRoutes(
    'accounts',
    {
      'POST /auth/login': defineRoute({
        run: async (request) => ok({ ip: request.sourceIp, headers: Object.keys(request.headers) }),
      }),
    },
    { authenticate },
  );
  const claim = async (headers: Record<string, string>) =>
    parseBody(
      await plainHandler(
        apiEvent({ method: 'POST', path: '/auth/login', body: {}, headers, sourceIp: '198.51.100.9' }),
        lambdaContext,
      ),
    ) as { data: { ip: string; headers: string[] } };

  it('is the connection address whatever the headers claim, and the claims never reach a route', async () => {
    for (const headers of <Array<Record<string, string>>>[
      { 'x-viewer-address': '203.0.113.50', 'x-origin-verify': 'a-proof-nobody-configured-0123456789' },
      { 'x-viewer-address': '203.0.113.50' },
      { 'x-forwarded-for': '203.0.113.50' },
    ]) {
      const { data } = await claim(headers);
      expect(data.ip, JSON.stringify(headers)).toBe('198.51.100.9');
      expect(data.headers).not.toContain('x-origin-verify');
      expect(data.headers).not.toContain('x-viewer-address');
    }
  });
});
