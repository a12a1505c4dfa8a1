// Cold-import cost of each Powertools package this service may load (docs/OBSERVABILITY.md records the
// figures). Each subject is imported by a fresh Node process, timed inside that process around the dynamic
// import (Node's own start-up excluded), median of RUNS, in two shapes:
// - `node_modules`: the package as installed (many files, as tests and `npm start` load it);
// - `bundled`: an entry importing only that package, built with the deployment's esbuild settings
//   (infra/bundling.ts), as a Lambda bundle carries it;
// and, for the tracer, `bundled, lazy`: an entry that only holds a dynamic import of it (what a stage
// without tracing pays for carrying it in the bundle). Never part of `npm test`.
//
// Usage: npm run bench:powertools [-- runs]   (npx tsx test/perf/powertools-import.ts [runs])
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions } from '#infra/bundling.ts';
import { DIST_DIR } from '../../scripts/bundle.ts';
import { median, round } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 5);

/** Module specifier, and the export touched so the import cannot be skipped. */
const SUBJECTS: Array<[string, string]> = [
  ['node:async_hooks', 'AsyncLocalStorage'],
  ['@aws-lambda-powertools/commons/utils/env', 'getBooleanFromEnv'],
  ['@aws-lambda-powertools/logger', 'Logger'],
  ['@aws-lambda-powertools/metrics', 'Metrics'],
  ['@aws-lambda-powertools/tracer', 'Tracer'],
  ['@aws-lambda-powertools/tracer/middleware', 'captureLambdaHandler'],
  ['aws-xray-sdk-core', 'default'],
  ['@aws-lambda-powertools/parameters', 'clearCaches'],
  ['@aws-lambda-powertools/parameters/secrets', 'getSecret'],
];

/** Milliseconds one fresh process spends in `await import(specifier)`. */
function importOnce(specifier: string, member: string): number {
  const script = [
    'const started = process.hrtime.bigint();',
    `const mod = await import(${JSON.stringify(specifier)});`,
    'const took = Number(process.hrtime.bigint() - started) / 1e6;',
    `if (mod[${JSON.stringify(member)}] === undefined) throw new Error('missing export');`,
    'process.stdout.write(String(took));',
  ].join('\n');
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const took = Number(child.stdout);
  if (child.status !== 0 || !Number.isFinite(took)) {
    throw new Error(`importing ${specifier} failed (${child.status}): ${child.stderr.slice(-2000)}`);
  }
  return took;
}

function medianOf(specifier: string, member: string): { p50_ms: number; runs_ms: number[] } {
  const runs: number[] = [];
  for (let run = 0; run < RUNS; run += 1) runs.push(importOnce(specifier, member));
  return { p50_ms: round(median(runs), 1), runs_ms: runs.map((ms) => round(ms, 1)) };
}

/** A bundle of `source` built as a function's bundle is; returns its file and size. */
async function bundle(name: string, source: string): Promise<{ file: string; kb: number }> {
  const dir = join(DIST_DIR, '.bench', 'powertools', name.replace(/[^a-z0-9]+/gi, '_'));
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'entry.mjs');
  writeFileSync(entry, source);
  const file = join(dir, BUNDLE_FILE);
  await build(esbuildOptions({ entry, outfile: file, packages: { native: [], installed: [] } }));
  return { file, kb: round(statSync(file).size / 1024, 0) };
}

interface Row {
  module: string;
  shape: 'node_modules' | 'bundled' | 'bundled, lazy';
  kb?: number;
  p50_ms: number;
  runs_ms: number[];
}

const rows: Row[] = [];
// The floor: a fresh process importing a bundle that holds nothing (what any import costs).
const empty = await bundle('empty', 'export const touched = 1;\n');
rows.push({
  module: '(empty bundle)',
  shape: 'bundled',
  kb: empty.kb,
  ...medianOf(pathToFileURL(empty.file).href, 'touched'),
});
for (const [specifier, member] of SUBJECTS) {
  rows.push({ module: specifier, shape: 'node_modules', ...medianOf(specifier, member) });
  if (specifier.startsWith('node:')) continue;
  const eager = await bundle(specifier, `export { ${member} as touched } from '${specifier}';\n`);
  rows.push({
    module: specifier,
    shape: 'bundled',
    kb: eager.kb,
    ...medianOf(pathToFileURL(eager.file).href, 'touched'),
  });
}
const lazy = await bundle(
  'tracer-lazy',
  "export const touched = () => import('@aws-lambda-powertools/tracer');\n",
);
rows.push({
  module: '@aws-lambda-powertools/tracer',
  shape: 'bundled, lazy',
  kb: lazy.kb,
  ...medianOf(pathToFileURL(lazy.file).href, 'touched'),
});

const width = Math.max(...rows.map((row) => row.module.length));
for (const row of rows) {
  const size = row.kb === undefined ? '' : `${row.kb} KiB`;
  console.log(
    `${row.module.padEnd(width)}  ${row.shape.padEnd(13)} ${size.padStart(9)}  ${String(row.p50_ms).padStart(7)} ms`,
  );
}
console.log(`POWERTOOLS_IMPORT ${JSON.stringify({ runs: RUNS, node: process.version, rows })}`);
