// `npm run build:functions`: every function (each group and each worker) bundled as for Lambda into
// dist/<name>/index.mjs, with the esbuild settings the CDK construct uses (infra/bundling.ts). Packages
// left external (argon2, sharp, the TOTP packages, file-type, the CloudFront client, the channels' SDKs:
// infra/bundling.ts GROUP_PACKAGES) resolve from this project's node_modules here; in AWS they ship beside
// the bundle.
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { WORKER_NAMES, type WorkerName } from '#functions/needs.ts';
import {
  BUNDLE_FILE,
  esbuildOptions,
  functionEntry,
  GROUP_PACKAGES,
  PROCESS_ENTRIES,
  PROJECT_FILES,
  PROJECT_ROOT,
} from '#infra/bundling.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '#lib/http/routes.ts';

export const DIST_DIR = join(PROJECT_ROOT, 'dist');

export interface BuiltBundle {
  group: FunctionGroup | WorkerName;
  file: string;
  bytes: number;
  metafile: Metafile;
}

/**
 * Bundles one function, and beside it the scripts it runs as processes of its own (PROCESS_ENTRIES); the
 * metafile tells which packages went into index.mjs (the benchmarks read the SDK clients).
 */
export async function bundleGroup(
  group: FunctionGroup | WorkerName,
  outDir = DIST_DIR,
): Promise<BuiltBundle> {
  const file = join(outDir, group, BUNDLE_FILE);
  mkdirSync(join(outDir, group), { recursive: true });
  const packages = GROUP_PACKAGES[group];
  const result = await build({
    ...esbuildOptions({ entry: functionEntry(group), outfile: file, packages }),
    metafile: true,
  });
  // Package files it reads at run time, where the CDK hook puts them (packageFileCommands).
  for (const path of packages.files ?? []) {
    const target = join(outDir, group, 'node_modules', path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(PROJECT_ROOT, 'node_modules', path), target);
  }
  for (const path of PROJECT_FILES[group] ?? []) {
    mkdirSync(dirname(join(outDir, group, path)), { recursive: true });
    copyFileSync(join(PROJECT_ROOT, path), join(outDir, group, path));
  }
  for (const [name, entry] of Object.entries(PROCESS_ENTRIES[group] ?? {})) {
    await build(
      esbuildOptions({ entry: join(PROJECT_ROOT, entry), outfile: join(outDir, group, name), packages }),
    );
  }
  return { group, file, bytes: statSync(file).size, metafile: result.metafile };
}

export async function bundleAll(outDir = DIST_DIR): Promise<BuiltBundle[]> {
  const built: BuiltBundle[] = [];
  // One at a time: esbuild already uses every core for each build.
  for (const group of [...FUNCTION_GROUPS, ...WORKER_NAMES]) built.push(await bundleGroup(group, outDir));
  return built;
}

async function main(): Promise<void> {
  const started = performance.now();
  const built = await bundleAll();
  for (const bundle of built) {
    const kb = (bundle.bytes / 1024).toFixed(0).padStart(6);
    console.log(`${bundle.group.padEnd(18)} ${kb} KiB  ${relative(PROJECT_ROOT, bundle.file)}`);
  }
  console.log(`${built.length} bundles in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
