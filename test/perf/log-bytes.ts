// Log bytes per request at INFO, in a process of its own (started by bench.ts, configured for the same
// stand-ins): the functions' real handlers run as Lambda runs them in prod (its execution environment, a
// sampled trace, Powertools' service and namespace), and every byte each request writes to standard output
// (its access line and any metric document) is counted. docs/DESIGN.md 23's goal: at most one line of at
// most 600 bytes a request. One function group a process (`log-bytes.ts <group>`: its service name is the
// group's, as infra/operations.ts sets it). Prints one line `LOGBYTES {json}`.
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { buildMultipart, makePng } from '#test/support/images.ts';

type Handler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

const SAMPLED_TRACE = 'Root=1-6740a2b1-5d1f4b7a9e2c1f2e3d4c5b6a;Parent=53995c3f42cd8ad8;Sampled=1';

async function main(group: string): Promise<void> {
  // Set before the first import of the configuration: INFO, and Lambda's environment in prod.
  Object.assign(process.env, {
    LOG__LEVEL: 'info',
    POWERTOOLS_SERVICE_NAME: group,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    POWERTOOLS_METRICS_NAMESPACE: 'AccountUploadPayment-prod',
    _X_AMZN_TRACE_ID: SAMPLED_TRACE,
  });
  const [{ createTestAccount }, { apiEvent, lambdaContext }, accounts, files, meta] = await Promise.all([
    import('#test/support/accounts.ts'),
    import('#test/support/events.ts'),
    import('#functions/accounts/handler.ts'),
    import('#functions/files/handler.ts'),
    import('#functions/meta/handler.ts'),
  ]);
  const user = await createTestAccount();

  let written = 0;
  let lines = 0;
  const realWrite = process.stdout.write.bind(process.stdout);
  const measured = async (handler: Handler, event: ApiEvent) => {
    written = 0;
    lines = 0;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      written += Buffer.byteLength(chunk);
      lines += String(chunk).split('\n').length - 1;
      if (process.env.LOGBYTES_SHOW) process.stderr.write(chunk);
      return true;
    }) as typeof process.stdout.write;
    try {
      await handler(event, { ...lambdaContext, awsRequestId: crypto.randomUUID() } as Context);
    } finally {
      process.stdout.write = realWrite;
    }
    return { bytes: written, lines };
  };

  const png = makePng(64, 48, [12, 34, 56]);
  const paths: Array<[string, Handler, () => ApiEvent, string]> = [
    [
      'login',
      accounts.handler,
      () =>
        apiEvent({
          method: 'POST',
          path: '/auth/login',
          body: { username: user.account.username, password: user.password },
        }),
      'accounts',
    ],
    ['me', accounts.handler, () => apiEvent({ path: '/auth/me', headers: user.headers }), 'accounts'],
    [
      'upload',
      files.handler,
      () => {
        const { body, contentType } = buildMultipart([
          { name: 'file', filename: 'a.png', contentType: 'image/png', data: png },
        ]);
        return apiEvent({
          method: 'POST',
          path: '/api/v1/upload',
          body,
          headers: { ...user.headers, 'content-type': contentType },
        });
      },
      'files',
    ],
    ['gallery', files.handler, () => apiEvent({ path: '/api/v1/gallery?limit=100' }), 'files'],
    ['bad request', files.handler, () => apiEvent({ path: '/api/v1/gallery?limit=banana' }), 'files'],
    ['healthz', meta.handler, () => apiEvent({ path: '/healthz' }), 'meta'],
  ];
  const per_path: Record<string, { bytes_max: number; lines_max: number }> = {};
  for (const [name, handler, event] of paths.filter(([, , , of]) => of === group)) {
    // The first is a cold start (its line carries the most); three more warm.
    for (let round = 0; round < 4; round++) {
      const { bytes, lines: count } = await measured(handler as Handler, event());
      const seen = per_path[name] ?? { bytes_max: 0, lines_max: 0 };
      per_path[name] = {
        bytes_max: Math.max(seen.bytes_max, bytes),
        lines_max: Math.max(seen.lines_max, count),
      };
    }
  }
  const max = Math.max(...Object.values(per_path).map((path) => path.bytes_max));
  const linesMax = Math.max(...Object.values(per_path).map((path) => path.lines_max));
  console.log(
    `LOGBYTES ${JSON.stringify({ log_bytes_per_request_max: max, log_lines_per_request_max: linesMax, per_path })}`,
  );
}

await main(process.argv[2] ?? 'files');
process.exit(0);
