// Cold import of each function bundle, as Lambda loads it: the bundle built exactly as for deployment
// (scripts/bundle.ts), imported by a fresh Node process, timed inside that process around the dynamic
// import (Node's own start-up excluded). Its yardstick: a bundle built the same way from an entry that
// only imports the AWS SDK clients the function's bundle contains, the floor any function using them pays.
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { BUNDLE_FILE, esbuildOptions } from '../../infra/bundling.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '../../lib/routes.ts';
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
};

export interface GroupImport {
  group: FunctionGroup;
  bundle_kb: number;
  baseline_kb: number;
  sdk_packages: string[];
  import_p50_ms: number;
  baseline_p50_ms: number;
  ratio: number;
  /** The largest packages in the bundle, KiB of minified output each. */
  top_packages: Array<[string, number]>;
}

export interface ColdImportReport {
  runs: number;
  node_options: string;
  groups: GroupImport[];
  cold_import_ratio_max: number;
  bundle_kb_max: number;
}

/** The SDK packages whose code went into the bundle, by the metafile's inputs. */
export function sdkPackagesOf(metafile: Metafile): string[] {
  const found = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /node_modules\/(@aws-sdk\/[^/]+)\//.exec(input);
    if (match?.[1] && match[1] in SDK_EXPORTS) found.add(match[1]);
  }
  return [...found].sort();
}

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

async function buildBaseline(group: FunctionGroup, packages: string[]): Promise<string> {
  const dir = join(DIST_DIR, '.bench', `${group}-sdk-only`);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'entry.mjs');
  // Referenced from an export, so esbuild keeps each client as the function bundle keeps it.
  const lines = packages.map((name, index) => `import { ${SDK_EXPORTS[name]} as c${index} } from '${name}';`);
  lines.push(`export const clients = [${packages.map((_, index) => `c${index}`).join(', ')}];`);
  lines.push('export const handler = async () => ({ statusCode: 200 });');
  writeFileSync(entry, `${lines.join('\n')}\n`);
  const outfile = join(dir, BUNDLE_FILE);
  await build(esbuildOptions({ entry, outfile, packages: { nativeArgon2: false, installed: [] } }));
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

export async function runColdImport(options: {
  runs: number;
  nodeOptions: string;
}): Promise<ColdImportReport> {
  const env = childEnv(options.nodeOptions);
  const groups: GroupImport[] = [];
  for (const group of FUNCTION_GROUPS) {
    const bundle = await bundleGroup(group);
    const sdkPackages = sdkPackagesOf(bundle.metafile);
    const baselineFile = await buildBaseline(group, sdkPackages);
    // One untimed import each fills the page cache; then alternate, so drift hits both alike.
    importOnce(bundle.file, env);
    importOnce(baselineFile, env);
    const subject: number[] = [];
    const baseline: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      if (run % 2 === 0) {
        subject.push(importOnce(bundle.file, env));
        baseline.push(importOnce(baselineFile, env));
      } else {
        baseline.push(importOnce(baselineFile, env));
        subject.push(importOnce(bundle.file, env));
      }
    }
    const importP50 = median(subject);
    const baselineP50 = median(baseline);
    groups.push({
      group,
      bundle_kb: round(bundle.bytes / 1024, 0),
      baseline_kb: round(statSync(baselineFile).size / 1024, 0),
      sdk_packages: sdkPackages,
      import_p50_ms: round(importP50, 1),
      baseline_p50_ms: round(baselineP50, 1),
      ratio: round(importP50 / baselineP50, 2),
      top_packages: packageSizes(bundle.metafile).slice(0, 6),
    });
  }
  return {
    runs: options.runs,
    node_options: options.nodeOptions,
    groups,
    cold_import_ratio_max: Math.max(...groups.map((entry) => entry.ratio)),
    bundle_kb_max: Math.max(...groups.map((entry) => entry.bundle_kb)),
  };
}
