// `npm run bench`: in one process, on DynamoDB Local (in memory) and s3rver, the overhead of each path over
// the storage work it cannot avoid, DynamoDB calls per request, cold import of every Lambda bundle, and a
// load run. Prints readable tables, then one last line `BENCH {json}`. Never part of `npm test`.
//
// Options (environment): BENCH_LOAD_SECONDS (20), BENCH_CONNECTIONS (32), BENCH_IMPORT_RUNS (15),
// BENCH_ME_ITERATIONS (1500), BENCH_LOGIN_ITERATIONS (60), BENCH_UPLOAD_ITERATIONS (40),
// BENCH_ORDER_ITERATIONS (100), BENCH_NODE_OPTIONS ('--enable-source-maps', as the functions run in AWS).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal } from '../../lib/local/dynamodb-local.ts';
import { startS3LocalProcess } from '../../lib/local/s3-local.ts';
import { runColdImport } from './cold-import.ts';
import { ms, table } from './stats.ts';

function option(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return value;
}

const GOALS = {
  me_overhead_ratio: 1.5,
  login_overhead_ratio: 1.3,
  upload_overhead_ratio: 1.5,
  cold_import_ratio_max: 1.5,
  bundle_kb_max: 1024,
} as const;

const verdict = (value: number, goal: number) => (value <= goal ? 'met' : 'MISSED');

async function main(): Promise<void> {
  const settings = {
    loadSeconds: option('BENCH_LOAD_SECONDS', 20),
    connections: option('BENCH_CONNECTIONS', 32),
    importRuns: option('BENCH_IMPORT_RUNS', 15),
    meIterations: option('BENCH_ME_ITERATIONS', 1500),
    loginIterations: option('BENCH_LOGIN_ITERATIONS', 60),
    uploadIterations: option('BENCH_UPLOAD_ITERATIONS', 40),
    orderIterations: option('BENCH_ORDER_ITERATIONS', 100),
    nodeOptions: process.env.BENCH_NODE_OPTIONS ?? '--enable-source-maps',
  };
  const started = performance.now();
  const machine = {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Number((totalmem() / 1024 ** 3).toFixed(1)),
    free_memory_gb: Number((freemem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
  console.log(
    `machine: ${machine.cpus} x ${machine.cpu_model}, ${machine.memory_gb} GB, node ${machine.node} (${machine.platform})`,
  );

  // Cold import first, before the stand-ins compete for the two cores.
  console.log(`\ncold import: bundling the ${5} groups, ${settings.importRuns} fresh processes each ...`);
  const coldImport = await runColdImport({ runs: settings.importRuns, nodeOptions: settings.nodeOptions });
  console.log(
    table(
      [
        'group',
        'bundle KiB',
        'import p50 ms',
        'SDK-only KiB',
        'SDK-only p50 ms',
        'ratio',
        'largest packages (KiB)',
      ],
      coldImport.groups.map((entry) => [
        entry.group,
        entry.bundle_kb,
        ms(entry.import_p50_ms),
        entry.baseline_kb,
        ms(entry.baseline_p50_ms),
        entry.ratio.toFixed(2),
        entry.top_packages
          .slice(0, 4)
          .map(([name, kb]) => `${name} ${kb}`)
          .join(', '),
      ]),
    ),
  );

  const scratch = mkdtempSync(join(tmpdir(), 'service-bench-'));
  const [dynamo, s3] = await Promise.all([
    startDynamoLocal(),
    // Its own process, as S3 is remote in AWS: its request handling must not share our thread.
    startS3LocalProcess({ directory: join(scratch, 's3') }),
  ]);
  try {
    // The configuration is read once, at the first import of lib/config: set it before importing any.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    process.env.APP_CONFIG_JSON = JSON.stringify({
      stage: 'bench',
      base_url: 'http://localhost:3000',
      log: { level: 'silent' },
    });
    process.env.LOG__LEVEL = 'silent';
    process.env.BASE_URL = 'http://localhost:3000';
    process.env.AWS__DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.AWS__S3_ENDPOINT = s3.endpoint;
    process.env.TABLE_NAME = 'bench';
    process.env.BUCKET_NAME = 'bench';
    process.env.DATA_DIR = join(scratch, 'data');
    const { provisionTestStack } = await import('../support/stack.ts');
    await provisionTestStack();
    const { runInProcess } = await import('./in-process.ts');
    const { runLoad } = await import('./load.ts');

    console.log('\nin process (handler chain vs. the bare storage work, measured alternately) ...');
    const inProcess = await runInProcess(settings);
    const paths = [
      ['GET /auth/me', inProcess.me, 'one GetItem', GOALS.me_overhead_ratio],
      ['POST /auth/login', inProcess.login, 'argon2 verify + one GetItem', GOALS.login_overhead_ratio],
      [
        'POST /api/v1/upload (4 MiB)',
        inProcess.upload,
        'SHA-256 + one PutObject',
        GOALS.upload_overhead_ratio,
      ],
    ] as const;
    console.log(
      table(
        ['path', 'n', 'p50 ms', 'baseline', 'baseline p50 ms', 'ratio', 'goal'],
        paths.map(([name, figures, baseline, goal]) => [
          name,
          figures.iterations,
          ms(figures.p50_ms),
          baseline,
          ms(figures.baseline_p50_ms),
          figures.ratio.toFixed(2),
          `<= ${goal} ${verdict(figures.ratio, goal)}`,
        ]),
      ),
    );
    console.log(
      `order create p50 ${ms(inProcess.order_create_p50_ms)} ms, callback settlement p50 ${ms(inProcess.callback_settlement_p50_ms)} ms`,
    );
    console.log('\nSDK calls per request:');
    console.log(
      table(
        ['request', 'DynamoDB', 'S3', 'DynamoDB operations'],
        Object.entries(inProcess.round_trips).map(([name, counts]) => [
          name,
          counts.dynamodb,
          counts.s3,
          Object.entries(counts.operations)
            .map(([operation, n]) => `${operation} x${n}`)
            .join(', '),
        ]),
      ),
    );

    console.log(
      `\nload: GET /auth/me over HTTP, ${settings.connections} connections, ${settings.loadSeconds} s; then raw GetItem, ${settings.connections} in flight ...`,
    );
    const load = await runLoad({ connections: settings.connections, seconds: settings.loadSeconds });
    console.log(
      table(
        ['load', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'errors'],
        [
          ['GET /auth/me (HTTP)', load.me_http],
          ['raw GetItem', load.raw_getitem],
        ].map(([name, figures]) => {
          const entry = figures as typeof load.me_http;
          return [
            name as string,
            entry.requests_per_s,
            entry.p50_ms,
            entry.p99_ms,
            entry.requests,
            entry.errors,
          ];
        }),
      ),
    );

    const summary = [
      ['me_overhead_ratio', inProcess.me.ratio, GOALS.me_overhead_ratio],
      ['login_overhead_ratio', inProcess.login.ratio, GOALS.login_overhead_ratio],
      ['upload_overhead_ratio', inProcess.upload.ratio, GOALS.upload_overhead_ratio],
      ['cold_import_ratio_max', coldImport.cold_import_ratio_max, GOALS.cold_import_ratio_max],
      ['bundle_kb_max', coldImport.bundle_kb_max, GOALS.bundle_kb_max],
    ] as const;
    console.log('\ngoals:');
    console.log(
      table(
        ['figure', 'value', 'goal'],
        summary.map(([name, value, goal]) => [name, value, `<= ${goal} ${verdict(value, goal)}`]),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`\n(${seconds.toFixed(0)} s in all)`);

    const round_trips = Object.fromEntries(
      Object.entries(inProcess.round_trips).map(([name, counts]) => [name, counts.dynamodb]),
    );
    const bench = {
      me_overhead_ratio: inProcess.me.ratio,
      login_overhead_ratio: inProcess.login.ratio,
      upload_overhead_ratio: inProcess.upload.ratio,
      cold_import_ratio_max: coldImport.cold_import_ratio_max,
      bundle_kb_max: coldImport.bundle_kb_max,
      round_trips,
      paths: {
        me: inProcess.me,
        login: inProcess.login,
        upload: inProcess.upload,
        order_create_p50_ms: inProcess.order_create_p50_ms,
        callback_settlement_p50_ms: inProcess.callback_settlement_p50_ms,
      },
      calls: inProcess.round_trips,
      cold_import: coldImport,
      load,
      machine,
      seconds: Math.round(seconds),
    };
    console.log(`BENCH ${JSON.stringify(bench)}`);
  } finally {
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  // Lazily built SDK clients keep sockets open; nothing else is left to finish.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
