// Tracing per stage (docs/OBSERVABILITY.md): without POWERTOOLS_TRACE_ENABLED nothing of the X-Ray SDK is
// loaded and clients are left as built; with it (in a Lambda-like environment) every client lib/platform/aws builds
// is captured, the invocation runs in a `## <group>` subsegment annotated with its route and status, and a
// 5xx answer marks that subsegment as a fault.
import { createRequire } from 'node:module';
import type { Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
/** Whether the X-Ray SDK (CommonJS, so it shows in the require cache) has been loaded in this process. */
const xraySdkLoaded = () => Object.keys(require.cache).some((file) => file.includes('aws-xray-sdk-core'));

const LAMBDA_LIKE: Record<string, string> = {
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x',
  LAMBDA_TASK_ROOT: '/var/task',
  _X_AMZN_TRACE_ID: 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1',
  // Segments go to a daemon that is not there (UDP, fire and forget); a missing context is not an error.
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
  AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
};
const saved = new Map(
  Object.keys({ ...LAMBDA_LIKE, POWERTOOLS_TRACE_ENABLED: '' }).map((k) => [k, process.env[k]]),
);
afterAll(() => {
  for (const [key, value] of saved) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

const middlewareNames = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify().join('\n');

describe('tracing off (no POWERTOOLS_TRACE_ENABLED)', () => {
  it('serves requests and builds clients without loading the X-Ray SDK or touching the clients', async () => {
    delete process.env.POWERTOOLS_TRACE_ENABLED;
    const { s3Client } = await import('#lib/platform/aws/s3.ts');
    const { loadTracer } = await import('#lib/platform/observability/tracing.ts');
    const { handlerOverRoutes, defineRoute, noCredentials } = await import('#lib/http/handler.ts');
    const { ok } = await import('#lib/http/envelope.ts');
    const { apiEvent, lambdaContext } = await import('#test/support/events.ts');
    const handler = handlerOverRoutes(
      'meta',
      { 'GET /healthz': defineRoute({ run: async () => ok({}) }) },
      {
        authenticate: noCredentials,
      },
    );

    const client = s3Client({ region: 'us-east-1', s3_endpoint: 'http://127.0.0.1:1' });
    const result = await handler(apiEvent({ method: 'GET', path: '/healthz' }), lambdaContext);

    expect(result.statusCode).toBe(200);
    expect(await loadTracer()).toBeUndefined();
    expect(middlewareNames(client)).not.toContain('XRaySDKInstrumentation');
    expect(xraySdkLoaded()).toBe(false);
  });
});

describe('tracing on (POWERTOOLS_TRACE_ENABLED=true, in Lambda)', () => {
  it('captures clients built before and after the Tracer loads, and traces each invocation', async () => {
    Object.assign(process.env, LAMBDA_LIKE, { POWERTOOLS_TRACE_ENABLED: 'true' });
    const { dynamoClient } = await import('#lib/platform/aws/dynamodb.ts');
    const { kmsClient } = await import('#lib/platform/aws/kms.ts');
    const { activeTracer } = await import('#lib/platform/observability/tracing.ts');
    const { handlerOverRoutes, defineRoute, noCredentials } = await import('#lib/http/handler.ts');
    const { ok } = await import('#lib/http/envelope.ts');
    const { apiEvent } = await import('#test/support/events.ts');

    // Built before any invocation: captured once the Tracer has loaded.
    const early = dynamoClient({ region: 'us-east-1', dynamodb_endpoint: 'http://127.0.0.1:1' });
    type Seen = { name: string; annotations?: Record<string, unknown>; fault?: boolean };
    const seen: Seen[] = [];
    // A group this process has not served yet: its first invocation is a cold start.
    const handler = handlerOverRoutes(
      'payments',
      {
        'GET /api/v1/plans': defineRoute({
          run: async () => {
            seen.push(activeTracer()?.getSegment() as unknown as Seen);
            return ok({});
          },
        }),
        'GET /api/v1/payment-gateways': defineRoute({
          run: async () => {
            seen.push(activeTracer()?.getSegment() as unknown as Seen);
            throw new Error('page generator broke');
          },
        }),
      },
      { authenticate: noCredentials },
    );
    const context = {
      awsRequestId: 'traced-1',
      getRemainingTimeInMillis: () => 30_000,
    } as unknown as Context;

    const fine = await handler(apiEvent({ method: 'GET', path: '/api/v1/plans' }), context);
    const broken = await handler(apiEvent({ method: 'GET', path: '/api/v1/payment-gateways' }), context);
    const late = kmsClient({ region: 'us-east-1', kms_endpoint: 'http://127.0.0.1:1' });

    expect([fine.statusCode, broken.statusCode]).toEqual([200, 500]);
    expect(xraySdkLoaded()).toBe(true);
    expect(middlewareNames(early)).toContain('XRaySDKInstrumentation');
    expect(middlewareNames(late)).toContain('XRaySDKInstrumentation');
    expect(seen.map((segment) => segment?.name)).toEqual(['## payments', '## payments']);
    expect(seen[0]!.annotations).toMatchObject({ route: 'GET /api/v1/plans', status: 200, ColdStart: true });
    expect(seen[0]!.fault).toBeFalsy();
    expect(seen[1]!.annotations).toMatchObject({
      route: 'GET /api/v1/payment-gateways',
      status: 500,
      ColdStart: false,
    });
    expect(seen[1]!.fault).toBe(true);
  });
});
