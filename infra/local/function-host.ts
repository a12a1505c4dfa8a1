// One function in its own process, as a Lambda container runs it: imports the handler module once (the
// cold start), then serves invocations from the local API Gateway over loopback HTTP. Only node: imports,
// so the deployed-shape test can run it beside a bundle with plain `node` (docs/CONTRIBUTING.md).
//
// Usage: node function-host.(ts|mjs) <module file> [export name] [--serial]
// Tells its parent `{type: 'ready', port}` over IPC, or `{type: 'failed', message}` and exits 1.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

const [moduleFile, exportName = 'handler', ...flags] = process.argv.slice(2);
const serial = flags.includes('--serial');
const timeoutMs = Number(process.env.LOCAL_FUNCTION_TIMEOUT_MS ?? 30_000);

function tell(message: Record<string, unknown>): void {
  process.send?.(message);
}

async function readJson(request: IncomingMessage): Promise<{ event: unknown }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: unknown };
}

function lambdaContext(requestId: string) {
  const deadline = Date.now() + timeoutMs;
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local';
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION ?? 'local'}:000000000000:function:${name}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function main(): Promise<void> {
  if (!moduleFile) throw new Error('usage: function-host <module file> [export name] [--serial]');
  const loaded = (await import(pathToFileURL(moduleFile).href)) as Record<string, unknown>;
  const handler = loaded[exportName];
  if (typeof handler !== 'function') throw new Error(`${moduleFile} exports no function ${exportName}`);

  // A Lambda container serves one request at a time; --serial keeps that (the deployed-shape test).
  let queue: Promise<unknown> = Promise.resolve();
  const invoke = (event: unknown) => {
    const run = () => (handler as Handler)(event, lambdaContext(randomUUID()));
    if (!serial) return run();
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  };

  const server = createServer((request, response) => {
    readJson(request)
      .then(({ event }) => invoke(event))
      .then(
        (result) => ({ result }),
        // What Lambda reports for an unhandled error: API Gateway turns it into a bare 500.
        (error: unknown) => ({ error: { name: (error as Error)?.name, message: (error as Error)?.message } }),
      )
      .then((answer) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer));
      })
      .catch(() => {
        response.writeHead(500);
        response.end();
      });
  });
  server.listen(0, '127.0.0.1', () => {
    tell({ type: 'ready', port: (server.address() as AddressInfo).port });
  });
  // The parent going away ends the function, like a container being reclaimed.
  process.on('disconnect', () => process.exit(0));
}

main().catch((error: unknown) => {
  tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  console.error(error);
  process.exit(1);
});
