// Cold import of each function bundle, as Lambda loads it: the bundle built exactly as for deployment
// (scripts/bundle.ts), imported by a fresh Node process, timed inside that process around the dynamic
// import (Node's own start-up excluded). Its yardstick: a bundle built the same way from an entry that
// only imports the AWS SDK clients the function's bundle contains, the floor any function using them pays.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions } from '#infra/bundling.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '#lib/http/routes.ts';
import { bundleGroup, DIST_DIR } from '../../scripts/bundle.ts';
import { median, round } from './stats.ts';

/** What to import for each SDK package a bundle may hold: its client (or its one helper). */
const SDK_EXPORTS: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'DynamoDBClient',
  '@aws-sdk/lib-dynamodb': 'DynamoDBDocumentClient',
  '@aws-sdk/client-s3': 'S3Client',
  '@aws-sdk/s3-request-presigner': 'getSignedUrl',
  '@aws-sdk/client-kms': 'KMSClient',
  '@aws-sdk/client-ses': 'SESClient',
  '@aws-sdk/client-sesv2': 'SESv2Client',
  '@aws-sdk/client-eventbridge': 'EventBridgeClient',
  '@aws-sdk/client-cloudfront': 'CloudFrontClient',
  '@aws-sdk/client-secrets-manager': 'SecretsManagerClient',
};

export interface GroupImport {
  group: FunctionGroup;
  bundle_kb: number;
  baseline_kb: number;
  sdk_packages: string[];
  /** Medians of every run of every round. */
  import_p50_ms: number;
  baseline_p50_ms: number;
  /** The median of the rounds' ratios. */
  ratio: number;
  round_ratios: number[];
  /** Powertools packages in the bundle and their KiB of its output. */
  powertools_kb: number;
  powertools_packages: string[];
  /** The largest packages in the bundle, KiB of minified output each. */
  top_packages: Array<[string, number]>;
}

export interface PowertoolsImport {
  /** The Powertools entry points any bundle contains, imported alone from one bundle built the same way. */
  imports: string[];
  bundle_kb: number;
  import_p50_ms: number;
  /** The same for a bundle that imports nothing (Node's own cost of an ESM import), for comparison. */
  empty_p50_ms: number;
}

export interface ColdImportReport {
  runs: number;
  rounds: number;
  node_options: string;
  groups: GroupImport[];
  powertools: PowertoolsImport | null;
  cold_import_ratio_max: number;
  bundle_kb_max: number;
}

/**
 * The SDK packages whose code went into the bundle, by the metafile's inputs. A service client missing from
 * SDK_EXPORTS is an error, not a silent omission: the yardstick would leave it out and charge its import
 * to our code (the Secrets Manager client, which the front door brought, was once counted that way).
 */
export function sdkPackagesOf(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /node_modules\/(@aws-sdk\/[^/]+)\//.exec(input);
    if (!match?.[1]) continue;
    if (match[1] in SDK_EXPORTS) found.add(match[1]);
    else if (match[1].startsWith('@aws-sdk/client-'))
      throw new Error(`${match[1]} is in a bundle but not in SDK_EXPORTS (test/perf/cold-import.ts)`);
  }
  return [...found].sort();
}

/**
 * The Powertools entry points whose code went into the bundle: a package's main entry, or for parameters
 * the provider's subpath (`@aws-lambda-powertools/parameters/secrets`), with a name each exports.
 */
export function powertoolsImportsOf(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /node_modules\/@aws-lambda-powertools\/([^/]+)\/(?:lib\/esm\/)?([^/]+)?/.exec(input);
    if (!match?.[1]) continue;
    const [, name, sub] = match;
    if (name === 'logger' || name === 'metrics' || name === 'tracer') found.add(name);
    if (name === 'parameters' && sub && ['secrets', 'ssm', 'appconfig', 'dynamodb'].includes(sub)) {
      found.add(`parameters/${sub}`);
    }
  }
  return [...found].sort();
}

const POWERTOOLS_EXPORTS: Record<string, string> = {
  logger: 'Logger',
  metrics: 'Metrics',
  tracer: 'Tracer',
  'parameters/secrets': 'getSecret',
  'parameters/ssm': 'getParameter',
  'parameters/appconfig': 'getAppConfig',
  'parameters/dynamodb': 'DynamoDBProvider',
};

/** KiB of minified output per package (or per lib/ and functions/ folder). */
export function packageSizes(metafile: Metafile): Array<[string, number]> {
  const output = Object.values(metafile.outputs).find((entry) => entry.entryPoint !== undefined);
  const sizes = new Map<string, number>();
  for (const [path, info] of Object.entries(output?.inputs ?? {})) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
    const key = match?.[1] ?? path.split('/').slice(0, 2).join('/');
    sizes.set(key, (sizes.get(key) ?? 0) + info.bytesInOutput);
  }
  return [...sizes]
    .sort((a, b) => b[1] - a[1])
    .map(([name, bytes]): [string, number] => [name, round(bytes / 1024, 0)]);
}

async function buildBaseline(name: string, packages: string[]): Promise<string> {
  const dir = join(DIST_DIR, '.bench', `${name}-sdk-only`);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'entry.mjs');
  // Referenced from an export, so esbuild keeps each client as the function bundle keeps it.
  const lines = packages.map((name, index) => `import { ${SDK_EXPORTS[name]} as c${index} } from '${name}';`);
  lines.push(`export const clients = [${packages.map((_, index) => `c${index}`).join(', ')}];`);
  lines.push('export const handler = async () => ({ statusCode: 200 });');
  writeFileSync(entry, `${lines.join('\n')}\n`);
  const outfile = join(dir, BUNDLE_FILE);
  await build(esbuildOptions({ entry, outfile, packages: { native: [], installed: [] } }));
  return outfile;
}

async function buildPowertoolsOnly(imports: string[]): Promise<string> {
  const dir = join(DIST_DIR, '.bench', 'powertools-only');
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'entry.mjs');
  const lines = imports.map(
    (path, index) =>
      `import { ${POWERTOOLS_EXPORTS[path]} as p${index} } from '@aws-lambda-powertools/${path}';`,
  );
  lines.push(`export const tools = [${imports.map((_, index) => `p${index}`).join(', ')}];`);
  lines.push('export const handler = async () => ({ statusCode: 200 });');
  writeFileSync(entry, `${lines.join('\n')}\n`);
  const outfile = join(dir, BUNDLE_FILE);
  await build(esbuildOptions({ entry, outfile, packages: { native: [], installed: [] } }));
  return outfile;
}

/** Environment of a Lambda container of this service, minus anything that would reach a network. */
function childEnv(nodeOptions: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    // The stage settings arrive as APP_CONFIG_JSON; the defaults load without any file.
    APP_CONFIG_JSON: JSON.stringify({ stage: 'bench', log: { level: 'silent' } }),
    TABLE_NAME: 'bench-cold-import',
    BUCKET_NAME: 'bench-cold-import',
    AWS_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    NODE_OPTIONS: nodeOptions,
  };
}

/** Milliseconds one fresh process spends in `await import(file)`. */
function importOnce(file: string, env: NodeJS.ProcessEnv): number {
  const script = [
    'const started = process.hrtime.bigint();',
    `const mod = await import(${JSON.stringify(pathToFileURL(file).href)});`,
    'const took = Number(process.hrtime.bigint() - started) / 1e6;',
    "if (typeof mod.handler !== 'function') throw new Error('no handler export');",
    'process.stdout.write(String(took));',
  ].join('\n');
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  const took = Number(child.stdout);
  if (child.status !== 0 || !Number.isFinite(took)) {
    throw new Error(`importing ${file} failed (${child.status}): ${child.stderr.slice(-2000)}`);
  }
  return took;
}

/** Subject and baseline imported alternately, `runs` each (after one untimed import of each). */
function alternate(subjectFile: string, baselineFile: string, runs: number, env: NodeJS.ProcessEnv) {
  const subject: number[] = [];
  const baseline: number[] = [];
  for (let run = 0; run < runs; run++) {
    if (run % 2 === 0) {
      subject.push(importOnce(subjectFile, env));
      baseline.push(importOnce(baselineFile, env));
    } else {
      baseline.push(importOnce(baselineFile, env));
      subject.push(importOnce(subjectFile, env));
    }
  }
  return { subject, baseline };
}

export async function runColdImport(options: {
  runs: number;
  rounds: number;
  nodeOptions: string;
}): Promise<ColdImportReport> {
  const env = childEnv(options.nodeOptions);
  const built = [];
  const powertoolsImports = new Set<string>();
  for (const group of FUNCTION_GROUPS) {
    const bundle = await bundleGroup(group);
    const sdkPackages = sdkPackagesOf(bundle.metafile);
    const baselineFile = await buildBaseline(group, sdkPackages);
    for (const path of powertoolsImportsOf(bundle.metafile)) powertoolsImports.add(path);
    // One untimed import each fills the page cache.
    importOnce(bundle.file, env);
    importOnce(baselineFile, env);
    built.push({ group, bundle, sdkPackages, baselineFile });
  }
  // Rounds go over every group in turn, so a drift of the machine during the run hits each group alike.
  const samples = new Map<FunctionGroup, Array<{ subject: number[]; baseline: number[] }>>();
  for (let round_ = 0; round_ < options.rounds; round_++) {
    const order = round_ % 2 === 0 ? built : [...built].reverse();
    for (const entry of order) {
      const list = samples.get(entry.group) ?? [];
      list.push(alternate(entry.bundle.file, entry.baselineFile, options.runs, env));
      samples.set(entry.group, list);
    }
  }
  const groups: GroupImport[] = built.map(({ group, bundle, sdkPackages, baselineFile }) => {
    const rounds = samples.get(group) ?? [];
    const roundRatios = rounds.map((r) => median(r.subject) / median(r.baseline));
    const sizes = packageSizes(bundle.metafile);
    const powertools = sizes.filter(([name]) => name.startsWith('@aws-lambda-powertools/'));
    return {
      group,
      bundle_kb: round(bundle.bytes / 1024, 0),
      baseline_kb: round(statSync(baselineFile).size / 1024, 0),
      sdk_packages: sdkPackages,
      import_p50_ms: round(median(rounds.flatMap((r) => r.subject)), 1),
      baseline_p50_ms: round(median(rounds.flatMap((r) => r.baseline)), 1),
      ratio: round(median(roundRatios), 2),
      round_ratios: roundRatios.map((ratio) => round(ratio, 2)),
      powertools_kb: powertools.reduce((sum, [, kb]) => sum + kb, 0),
      powertools_packages: powertools.map(([name]) => name),
      top_packages: sizes.slice(0, 6),
    };
  });
  let powertools: PowertoolsImport | null = null;
  if (powertoolsImports.size > 0) {
    const imports = [...powertoolsImports].sort();
    const file = await buildPowertoolsOnly(imports);
    const empty = await buildBaseline('nothing', []);
    importOnce(file, env);
    importOnce(empty, env);
    const { subject, baseline } = alternate(file, empty, options.runs, env);
    powertools = {
      imports,
      bundle_kb: round(statSync(file).size / 1024, 0),
      import_p50_ms: round(median(subject), 1),
      empty_p50_ms: round(median(baseline), 1),
    };
  }
  return {
    runs: options.runs,
    rounds: options.rounds,
    node_options: options.nodeOptions,
    groups,
    powertools,
    cold_import_ratio_max: Math.max(...groups.map((entry) => entry.ratio)),
    bundle_kb_max: Math.max(...groups.map((entry) => entry.bundle_kb)),
  };
}
