// Load: GET /auth/me on the local HTTP server under autocannon (its own process, so the load generator does
// not share the server's event loop), beside raw GetItem calls at the same concurrency for the same time.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalApp } from '#infra/local/app.ts';
import { accountKey } from '#lib/accounts/repository.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { quantile, round } from './stats.ts';

export interface Throughput {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  requests: number;
  errors: number;
}

export interface LoadReport {
  connections: number;
  seconds: number;
  me_http: Throughput;
  raw_getitem: Throughput;
  /** me_http.requests_per_s / raw_getitem.requests_per_s */
  throughput_ratio: number;
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

function autocannonCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('autocannon/package.json')), 'autocannon.js');
}

async function runAutocannon(url: string, token: string, connections: number, seconds: number) {
  const args = [
    autocannonCli(),
    '--json',
    '-c',
    String(connections),
    '-d',
    String(seconds),
    '-H',
    `authorization=Bearer ${token}`,
    url,
  ];
  // Asynchronous: the server under test runs on this process's event loop.
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${stderr}`);
  const result = JSON.parse(stdout) as AutocannonJson;
  return {
    requests_per_s: round(result.requests.average, 0),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** `connections` callers each sending one GetItem after another until the time is up. */
async function rawGetItemLoad(accountId: string, connections: number, seconds: number): Promise<Throughput> {
  const client = dynamoClient(config.aws);
  const command = () => new GetCommand({ TableName: config.table_name, Key: accountKey(accountId) });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const caller = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      try {
        await client.send(command());
        latencies.push(performance.now() - sent);
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, caller));
  const elapsed = (performance.now() - started) / 1000;
  return {
    requests_per_s: round(latencies.length / elapsed, 0),
    p50_ms: round(quantile(latencies, 0.5), 2),
    p99_ms: round(quantile(latencies, 0.99), 2),
    requests: latencies.length,
    errors,
  };
}

export async function runLoad(options: { connections: number; seconds: number }): Promise<LoadReport> {
  const user = await createTestAccount();
  const app = await startLocalApp({ port: 0 });
  try {
    const port = new URL(app.url).port;
    const url = `http://127.0.0.1:${port}/auth/me`;
    // A short warm-up: the accounts group's first import and JIT, not part of the figure.
    await runAutocannon(url, user.token, options.connections, 2);
    const me = await runAutocannon(url, user.token, options.connections, options.seconds);
    const raw = await rawGetItemLoad(user.account.id, options.connections, options.seconds);
    return {
      connections: options.connections,
      seconds: options.seconds,
      me_http: me,
      raw_getitem: raw,
      throughput_ratio: round(me.requests_per_s / raw.requests_per_s, 2),
    };
  } finally {
    await app.close();
  }
}
