// What each bundle holds (infra/bundling.ts): the Tracer and the X-Ray SDK are never inside a bundle; they
// ship beside it only on traced stages, so an untraced function neither parses nor ships them. Zod is there
// as zod/mini with the English locale only (lib/platform/zod.ts), never classic zod. TOTP's packages and file-type,
// which only a few requests load, ship beside the one bundle that loads them and are in none. The native
// addons (argon2, sharp) are external to every bundle, ship built for Lambda beside the one that loads each,
// and the build fails when one did not arrive or a bundle that does not ship it imports it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  ARGON2_PACKAGE,
  BUNDLE_FILE,
  CLOUDFRONT_SDK,
  esbuildOptions,
  externalModulesOf,
  FILE_TYPE_PACKAGE,
  functionEntry,
  GROUP_PACKAGES,
  KEY_VALUE_STORE_SDK,
  NATIVE_ADDON_NAMES,
  NATIVE_ADDONS,
  nativeBinaryCheck,
  nativeChecks,
  nativeImportCheck,
  nodeModulesOf,
  PROCESS_ENTRIES,
  PROJECT_ROOT,
  processEntryCommands,
  SHARP_PACKAGE,
  TOTP_PACKAGES,
  TRACER_PACKAGE,
  TRACER_PACKAGES,
} from '#infra/bundling.ts';
import { RENDER_WORKER_BUNDLE, RenderProcesses, renderProcessScript } from '#lib/files/render-processes.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { photoJpeg } from '#test/support/images.ts';
import { bundleGroup } from '../../scripts/bundle.ts';

describe('bundles and the CloudFront client', () => {
  it('keeps the CloudFront SDKs out of every bundle, shipped beside the one function that invalidates and writes the deny-list (takedowns)', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      for (const sdk of [CLOUDFRONT_SDK, ...KEY_VALUE_STORE_SDK]) {
        expect(externalModulesOf(packages), group).toContain(sdk);
        expect(nodeModulesOf(packages).includes(sdk), `${group}: ${sdk}`).toBe(group === 'takedowns');
      }
    }
  });
});

/** The package a bare import names (`file-type/core` -> `file-type`, `@otplib/core` as is). */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** The packages and everything their package.json files depend on, as installed in this project. */
function withDependencies(names: readonly string[]): Set<string> {
  const found = new Set<string>();
  const visit = (name: string) => {
    if (found.has(name)) return;
    found.add(name);
    const manifest = JSON.parse(
      readFileSync(join(PROJECT_ROOT, 'node_modules', name, 'package.json'), 'utf8'),
    ) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency);
  };
  for (const name of names) visit(name);
  return found;
}

async function bundleMetafile(group: string, packages: (typeof GROUP_PACKAGES)[keyof typeof GROUP_PACKAGES]) {
  const { metafile } = await build({
    ...esbuildOptions({
      entry: functionEntry(group as FunctionGroup),
      outfile: join(tmpdir(), 'bundle-installed', group, 'index.mjs'),
      packages,
    }),
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return metafile;
}

describe('bundles and the packages only some requests load', () => {
  it('installs TOTP packages beside the accounts bundle and file-type beside the files bundle only', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      for (const name of TOTP_PACKAGES) {
        expect(nodeModulesOf(packages).includes(name), `${group} ${name}`).toBe(group === 'accounts');
      }
      expect(nodeModulesOf(packages).includes(FILE_TYPE_PACKAGE), group).toBe(group === 'files');
    }
  });

  it('bundles none of their code; each bundle imports only what ships beside it, on first use', async () => {
    // otplib brings @otplib/*, @noble/hashes, @scure/base; file-type brings strtok3, @tokenizer/*, debug...
    const moved = withDependencies([...TOTP_PACKAGES, FILE_TYPE_PACKAGE]);
    const builtins = new Set(builtinModules);
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      const metafile = await bundleMetafile(group, packages);
      const output = Object.values(metafile.outputs).find((entry) => entry.entryPoint !== undefined)!;
      const bundled = Object.entries(output.inputs)
        .filter(([, input]) => input.bytesInOutput > 0)
        .map(([path]) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1])
        .filter((name): name is string => name !== undefined);
      expect(
        bundled.filter((name) => moved.has(name)),
        group,
      ).toEqual([]);

      const external = output.imports.filter(
        (entry) => entry.external && !entry.path.startsWith('node:') && !builtins.has(entry.path),
      );
      // Never a static import: that would load them at every cold start, the cost this avoids. A native
      // addon the group ships may be: every request of that group loads it anyway (sharp for render).
      // One declared unreachable is never loaded at all (node-fetch's `encoding` inside TensorFlow.js).
      const ownAddons = new Set<string>(packages.native.map((addon) => NATIVE_ADDONS[addon].package));
      const never = new Set(packages.unreachable ?? []);
      expect(
        external.filter(
          (entry) => entry.kind !== 'dynamic-import' && !ownAddons.has(entry.path) && !never.has(entry.path),
        ),
        group,
      ).toEqual([]);
      // Whatever the bundle loads ships beside it (the tracer where traced), or is declared never reached.
      const shipped = new Set([
        ...nodeModulesOf(packages, { tracing: true }),
        ...(packages.unreachable ?? []),
      ]);
      for (const entry of external)
        expect(shipped, `${group} imports ${entry.path}`).toContain(packageOf(entry.path));

      const named = new Set(external.map((entry) => entry.path));
      expect(
        [...TOTP_PACKAGES].every((name) => named.has(name)),
        group,
      ).toBe(group === 'accounts');
      expect(named.has(`${FILE_TYPE_PACKAGE}/core`), group).toBe(group === 'files');
    }
  }, 120_000);
});

/** Runs one afterBundling command as the CDK build does (bash -c); its exit status and what it said. */
function runHook(command: string): { status: number | null; stderr: string } {
  const run = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

/** An empty file at `path` (under `root`), its folders made. */
function touch(root: string, path: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), '');
}

describe('bundles and the native addons', () => {
  it('leaves argon2 and sharp out of every bundle: argon2 beside accounts, shares and payments, sharp beside render, shares, files (the block list) and moderation', () => {
    expect(NATIVE_ADDON_NAMES.map((addon) => NATIVE_ADDONS[addon].package).sort()).toEqual(
      [ARGON2_PACKAGE, SHARP_PACKAGE].sort(),
    );
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      expect(externalModulesOf(packages), group).toEqual(
        expect.arrayContaining([ARGON2_PACKAGE, SHARP_PACKAGE]),
      );
      expect(nodeModulesOf(packages).includes(ARGON2_PACKAGE), group).toBe(
        group === 'accounts' || group === 'shares' || group === 'payments',
      );
      expect(nodeModulesOf(packages).includes(SHARP_PACKAGE), group).toBe(
        ['render', 'shares', 'files', 'moderation'].includes(group),
      );
    }
  });

  it("passes every real bundle's import checks, and fails one that imports sharp without shipping it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-native-'));
    try {
      for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
        const outDir = join(dir, group);
        await build({
          ...esbuildOptions({
            entry: functionEntry(group as FunctionGroup),
            outfile: join(outDir, BUNDLE_FILE),
            packages,
          }),
          sourcemap: false,
          logLevel: 'silent',
        });
        for (const addon of NATIVE_ADDON_NAMES.filter((name) => !packages.native.includes(name))) {
          expect(runHook(nativeImportCheck(outDir, addon, group)), `${group} ${addon}`).toEqual({
            status: 0,
            stderr: '',
          });
        }
      }
      // Shared code that reached sharp from a bundle that does not ship it, by either kind of import.
      const imports = {
        dynamic: "export const load = () => import('sharp');",
        static: "import sharp from 'sharp';\nexport const load = () => sharp;",
      };
      for (const [kind, code] of Object.entries(imports)) {
        const outDir = join(dir, `stray-${kind}`);
        mkdirSync(outDir);
        writeFileSync(join(outDir, 'entry.ts'), code);
        await build({
          ...esbuildOptions({
            entry: join(outDir, 'entry.ts'),
            outfile: join(outDir, BUNDLE_FILE),
            packages: GROUP_PACKAGES.meta,
          }),
          sourcemap: false,
          logLevel: 'silent',
        });
        const checks = nativeChecks(outDir, 'meta', GROUP_PACKAGES.meta, 'arm64');

        const failed = checks.map(runHook).filter((run) => run.status !== 0);
        expect(
          failed.map((run) => run.status),
          kind,
        ).toEqual([1]);
        expect(failed[0]!.stderr, kind).toContain(
          "meta imports sharp; ship it (GROUP_PACKAGES native: ['sharp'])",
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('fails the build unless sharp and its libvips arrived beside the render bundle built for arm64', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-sharp-'));
    const asset = (name: string, files: string[]) => {
      const root = join(dir, name);
      for (const file of files) touch(root, `node_modules/${file}`);
      return root;
    };
    const arm64 = [
      '@img/sharp-linux-arm64/lib/sharp-linux-arm64-0.35.5.node',
      '@img/sharp-libvips-linux-arm64/lib/libvips-cpp.so.8.18.7',
    ];
    const x64 = [
      '@img/sharp-linux-x64/lib/sharp-linux-x64-0.35.5.node',
      '@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.8.18.7',
    ];
    try {
      // The render build runs this check, and argon2's import check (it ships no argon2).
      expect(nativeChecks('OUT', 'render', GROUP_PACKAGES.render, 'arm64')).toEqual([
        nativeImportCheck('OUT', 'argon2', 'render'),
        nativeBinaryCheck('OUT', 'sharp', 'arm64'),
      ]);

      const complete = runHook(nativeBinaryCheck(asset('complete', arm64), 'sharp', 'arm64'));
      // npm ignored npm_config_cpu: the build machine's packages came instead.
      const buildMachines = runHook(nativeBinaryCheck(asset('x64', x64), 'sharp', 'arm64'));
      const withoutLibvips = runHook(nativeBinaryCheck(asset('no-libvips', [arm64[0]!]), 'sharp', 'arm64'));

      expect(complete).toEqual({ status: 0, stderr: '' });
      expect(buildMachines.status).toBe(1);
      expect(buildMachines.stderr).toMatch(
        /missing .*@img\/sharp-linux-arm64\/lib\/\*\.node: sharp not installed for Lambda \(arm64\)/,
      );
      expect(withoutLibvips.status).toBe(1);
      expect(withoutLibvips.stderr).toContain('@img/sharp-libvips-linux-arm64/lib/libvips-cpp.so.*');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the files each addon's real packages hold: this machine's installs pass their own checks", () => {
    // The project's node_modules holds the packages npm chose for this machine (x64 here); the globs the
    // Lambda build is checked with must match how those packages are laid out.
    const cpu = process.arch === 'arm64' ? 'arm64' : 'x64';
    for (const addon of NATIVE_ADDON_NAMES) {
      expect(runHook(nativeBinaryCheck(PROJECT_ROOT, addon, cpu)), addon).toEqual({ status: 0, stderr: '' });
    }
  });
});

describe('bundles and the tracer', () => {
  it('keeps the tracer packages out of every bundle, and ships the tracer only where tracing is on', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      expect(externalModulesOf(packages), group).toEqual(expect.arrayContaining([...TRACER_PACKAGES]));
      expect(nodeModulesOf(packages), group).not.toContain(TRACER_PACKAGE);
      expect(nodeModulesOf(packages, { tracing: true }), group).toContain(TRACER_PACKAGE);
    }
  });

  it('builds a bundle that imports the tracer lazily by name and holds none of the X-Ray SDK', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bundle-tracer-'));
    try {
      const outfile = join(dir, 'index.mjs');
      await build({
        ...esbuildOptions({ entry: functionEntry('meta'), outfile, packages: GROUP_PACKAGES.meta }),
        sourcemap: false,
        logLevel: 'silent',
      });
      const bundle = readFileSync(outfile, 'utf8');

      expect(bundle).toMatch(/import\(["']@aws-lambda-powertools\/tracer["']\)/);
      // The X-Ray SDK's own segment code (and its name) appear nowhere in the bundle.
      expect(bundle).not.toContain('aws-xray-sdk-core');
      expect(bundle).not.toContain('AWS_XRAY_DAEMON_ADDRESS');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('bundles and zod', () => {
  it('builds every function with zod/mini and its English locale, never classic zod or the other locales', async () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      const { metafile } = await build({
        ...esbuildOptions({
          entry: functionEntry(group as FunctionGroup),
          outfile: join(tmpdir(), 'bundle-zod', group, 'index.mjs'),
          packages,
        }),
        sourcemap: false,
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const zodPath = (input: string) => /node_modules\/zod\/(.*)$/.exec(input)?.[1];
      const imported = Object.keys(metafile.inputs).map(zodPath);
      // What went into the bundle (esbuild also lists the modules it read and then shook out entirely).
      const bundled = Object.values(metafile.outputs).flatMap((output) =>
        Object.entries(output.inputs)
          .filter(([, input]) => input.bytesInOutput > 0)
          .map(([path]) => zodPath(path)),
      );
      // Classic zod (about 91 KiB, and dozens of methods built onto every schema) would cost every cold start.
      expect(
        imported.filter((path) => path?.startsWith('v4/classic/')),
        group,
      ).toEqual([]);
      expect(
        bundled.filter((path) => path?.startsWith('v4/locales/')),
        group,
      ).toEqual(['v4/locales/en.js']);
      expect(bundled, group).toContain('v4/mini/schemas.js');
    }
  }, 120_000);
});

describe('the render process bundle', () => {
  it('is built beside the render bundle by build:functions and by the CDK hook; it loads sharp, the function never does', async () => {
    // Inside the project, so the bundles find its node_modules (sharp) as a Lambda asset finds its own.
    mkdirSync(join(PROJECT_ROOT, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(PROJECT_ROOT, 'node_modules', '.cache', 'bundle-render-'));
    try {
      // The shares function renders its share-scoped thumbnails through the same render processes.
      const renderProcess = { [RENDER_WORKER_BUNDLE]: 'lib/files/render-worker.ts' };
      expect(PROCESS_ENTRIES).toEqual({ render: renderProcess, shares: renderProcess });
      await bundleGroup('render', dir);
      const hookDir = join(dir, 'hook');
      mkdirSync(hookDir);
      const commands = processEntryCommands(PROJECT_ROOT, hookDir, 'render');
      expect(commands).toHaveLength(1);
      expect(runHook(commands[0]!)).toEqual({ status: 0, stderr: '' });
      expect(processEntryCommands(PROJECT_ROOT, hookDir, 'files')).toEqual([]);

      const index = readFileSync(join(dir, 'render', BUNDLE_FILE), 'utf8');
      for (const file of [join(dir, 'render', RENDER_WORKER_BUNDLE), join(hookDir, RENDER_WORKER_BUNDLE)]) {
        const worker = readFileSync(file, 'utf8');
        expect(worker).toMatch(/import\(["']sharp["']\)/);
        // None of the function's code: no SDK, no settings, no log.
        expect(worker).not.toMatch(/@aws-sdk|APP_CONFIG|powertools/);
      }
      // The function's own bundle never names sharp: it starts the render process by its file name.
      expect(index).not.toMatch(/["']sharp["']/);
      expect(index).toContain(RENDER_WORKER_BUNDLE);

      // And the built one renders under plain node, found where the bundle looks for it.
      const script = renderProcessScript(pathToFileURL(join(dir, 'render', BUNDLE_FILE)).href);
      expect(script).toEqual({ file: join(dir, 'render', RENDER_WORKER_BUNDLE), execArgv: [] });
      const processes = new RenderProcesses({ script, timeoutSeconds: 20, memoryMb: 1024, idleMax: 0 });
      const rendered = await processes.render({
        source: await photoJpeg(320, 240),
        sourceFormat: 'jpeg',
        params: { fit: 'inside', quality: 75, width: 32 },
        output: 'png',
        limits: { maxInputPixels: 50_000_000, maxFrames: 1000, avifMaxPixels: 8_294_400 },
      });
      expect([rendered.contentType, rendered.width, rendered.height]).toEqual(['image/png', 32, 24]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
