// What single modules cost at a cold import, as the function bundles load them: each entry below bundled
// alone with the deployment's esbuild options, imported by fresh Node processes (alternating entries, the
// median per entry), with and without `--enable-source-maps`. Run: `npx tsx test/perf/module-cost.ts`
// (BENCH_IMPORT_RUNS, default 11). Never part of npm test; used to decide what runs before the first request
// (docs/PERFORMANCE.md "Cold start"). `--source-maps`: what `--enable-source-maps` costs each group's bundle.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions, PROJECT_ROOT } from '#infra/bundling.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import { DIST_DIR } from '../../scripts/bundle.ts';
import { median, round, table } from './stats.ts';

const lib = (path: string) => JSON.stringify(join(PROJECT_ROOT, path));

/** name -> entry source (each exports what it imports, so esbuild keeps it). */
export const ENTRIES: Record<string, string> = {
  nothing: 'export const x = 1;',
  zod: "import * as z from 'zod'; export const s = z.object({ a: z.string() });",
  // What the service builds its schemas with (lib/platform/zod.ts): tree-shaken, no methods built onto each schema.
  'zod/mini': "import * as z from 'zod/mini'; export const s = z.object({ a: z.string() });",
  'lib/platform/config (zod + schema + validation)': `import { config } from ${lib('lib/platform/config/index.ts')}; export const c = config;`,
  'lib/log': `import { log } from ${lib('lib/platform/log.ts')}; export const l = log;`,
  'lib/platform/observability/metrics': `import * as m from ${lib('lib/platform/observability/metrics.ts')}; export const x = m;`,
  '@aws-lambda-powertools/logger':
    "import { Logger } from '@aws-lambda-powertools/logger'; export const x = Logger;",
  '@aws-lambda-powertools/metrics':
    "import { Metrics } from '@aws-lambda-powertools/metrics'; export const x = Metrics;",
  '@aws-lambda-powertools/tracer':
    "import { Tracer } from '@aws-lambda-powertools/tracer'; export const x = Tracer;",
  jose: "import { jwtVerify, SignJWT } from 'jose'; export const x = [jwtVerify, SignJWT];",
  '@middy/core': "import middy from '@middy/core'; export const x = middy;",
  '@middy/core + lib/http/handler': `import { createGroupHandler } from ${lib('lib/http/handler.ts')}; export const x = createGroupHandler;`,
  // Built at import, as a function imports them.
  'lib/accounts/schemas': `import { queries, schemas } from ${lib('lib/http/schemas/accounts.ts')}; export const x = [schemas, queries];`,
  // Only the API document and the tests read them; built at import all the same.
  'lib/accounts/responses': `import { responses } from ${lib('lib/http/schemas/account-views.ts')}; export const x = responses;`,
};

function childEnv(nodeOptions: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    APP_CONFIG_JSON: JSON.stringify({ stage: 'bench', log: { level: 'silent' } }),
    TABLE_NAME: 'bench-module-cost',
    BUCKET_NAME: 'bench-module-cost',
    AWS_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    NODE_OPTIONS: nodeOptions,
  };
}

/**
 * Wall and CPU milliseconds (user + system) of one fresh process's `await import(file)`. On a loaded
 * machine the wall time swings by tens of milliseconds; the CPU time, the work itself, much less.
 */
function importTimed(file: string, env: NodeJS.ProcessEnv): { wall: number; cpu: number } {
  const script = [
    'const cpu = process.cpuUsage();',
    'const started = process.hrtime.bigint();',
    `await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'const wall = Number(process.hrtime.bigint() - started) / 1e6;',
    'const used = process.cpuUsage(cpu);',
    "process.stdout.write(String(wall) + ' ' + String((used.user + used.system) / 1000));",
  ].join('\n');
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  const [wall, cpu] = child.stdout.split(' ').map(Number);
  if (child.status !== 0 || !Number.isFinite(wall) || !Number.isFinite(cpu)) {
    throw new Error(`${file}: ${child.stderr.slice(-1000)}`);
  }
  return { wall: wall!, cpu: cpu! };
}

const importOnce = (file: string, env: NodeJS.ProcessEnv) => importTimed(file, env).wall;

export async function moduleCosts(runs: number) {
  const files: Array<{ name: string; file: string; kb: number }> = [];
  for (const [index, [name, source]] of Object.entries(ENTRIES).entries()) {
    const dir = join(DIST_DIR, '.bench', `module-${index}`);
    mkdirSync(dir, { recursive: true });
    const entry = join(dir, 'entry.mjs');
    writeFileSync(entry, `${source}\n`);
    const outfile = join(dir, BUNDLE_FILE);
    await build(esbuildOptions({ entry, outfile, packages: { native: [], installed: [] } }));
    files.push({ name, file: outfile, kb: round(statSync(outfile).size / 1024, 0) });
  }
  const results = [];
  for (const nodeOptions of ['--enable-source-maps', '']) {
    const env = childEnv(nodeOptions);
    const samples = new Map(files.map((entry) => [entry.name, [] as number[]]));
    for (const entry of files) importOnce(entry.file, env);
    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? files : [...files].reverse();
      for (const entry of order) samples.get(entry.name)!.push(importOnce(entry.file, env));
    }
    results.push({
      node_options: nodeOptions || '(none)',
      modules: files.map((entry) => ({
        name: entry.name,
        kb: entry.kb,
        p50_ms: round(median(samples.get(entry.name)!), 1),
      })),
    });
  }
  return results;
}

/**
 * What `--enable-source-maps` costs each group's cold import: dist/<group>/index.mjs (as bundled by the last
 * `npm run bench` or `npm run build:functions`) imported with and without it, alternating.
 */
export function sourceMapCosts(runs: number) {
  const withMaps = childEnv('--enable-source-maps');
  const without = childEnv('');
  return FUNCTION_GROUPS.map((group) => {
    const file = join(DIST_DIR, group, BUNDLE_FILE);
    importOnce(file, withMaps);
    importOnce(file, without);
    const a: Array<{ wall: number; cpu: number }> = [];
    const b: Array<{ wall: number; cpu: number }> = [];
    for (let run = 0; run < runs; run++) {
      if (run % 2 === 0) {
        a.push(importTimed(file, withMaps));
        b.push(importTimed(file, without));
      } else {
        b.push(importTimed(file, without));
        a.push(importTimed(file, withMaps));
      }
    }
    const p50 = (samples: Array<{ wall: number; cpu: number }>, key: 'wall' | 'cpu') =>
      median(samples.map((sample) => sample[key]));
    return {
      group,
      map_kb: round(statSync(`${file}.map`).size / 1024, 0),
      with_maps_p50_ms: round(p50(a, 'wall'), 1),
      without_p50_ms: round(p50(b, 'wall'), 1),
      with_maps_cpu_ms: round(p50(a, 'cpu'), 1),
      without_cpu_ms: round(p50(b, 'cpu'), 1),
      cost_ms: round(p50(a, 'wall') - p50(b, 'wall'), 1),
      cost_cpu_ms: round(p50(a, 'cpu') - p50(b, 'cpu'), 1),
    };
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href && process.argv.includes('--source-maps')) {
  const runs = Number(process.env.BENCH_IMPORT_RUNS ?? 11);
  const groups = sourceMapCosts(runs);
  console.log(
    table(
      ['group', 'map KiB', 'wall p50 (maps / none)', 'cost ms', 'CPU p50 (maps / none)', 'CPU cost ms'],
      groups.map((entry) => [
        entry.group,
        entry.map_kb,
        `${entry.with_maps_p50_ms.toFixed(1)} / ${entry.without_p50_ms.toFixed(1)}`,
        entry.cost_ms.toFixed(1),
        `${entry.with_maps_cpu_ms.toFixed(1)} / ${entry.without_cpu_ms.toFixed(1)}`,
        entry.cost_cpu_ms.toFixed(1),
      ]),
    ),
  );
  console.log(`SOURCEMAPS ${JSON.stringify({ runs, groups })}`);
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.env.BENCH_IMPORT_RUNS ?? 11);
  const results = await moduleCosts(runs);
  const [withMaps, without] = results;
  console.log(
    table(
      ['module', 'KiB', 'p50 ms (source maps)', 'p50 ms (none)'],
      withMaps!.modules.map((entry, index) => [
        entry.name,
        entry.kb,
        entry.p50_ms.toFixed(1),
        without!.modules[index]!.p50_ms.toFixed(1),
      ]),
    ),
  );
  console.log(`MODULES ${JSON.stringify({ runs, results })}`);
}
