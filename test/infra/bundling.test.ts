// What each bundle holds (infra/bundling.ts): the Tracer and the X-Ray SDK are never inside a bundle; they
// ship beside it only on traced stages, so an untraced function neither parses nor ships them. Zod is there
// as zod/mini with the English locale only (lib/platform/zod.ts), never classic zod. TOTP's packages and file-type,
// which only a few requests load, ship beside the one bundle that loads them and are in none.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  CLOUDFRONT_SDK,
  esbuildOptions,
  externalModulesOf,
  FILE_TYPE_PACKAGE,
  functionEntry,
  GROUP_PACKAGES,
  nodeModulesOf,
  PROJECT_ROOT,
  TOTP_PACKAGES,
  TRACER_PACKAGE,
  TRACER_PACKAGES,
} from '#infra/bundling.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';

describe('bundles and the CloudFront client', () => {
  it('keeps the CloudFront SDK out of every bundle, shipped beside the one function that invalidates (takedowns)', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      expect(externalModulesOf(packages), group).toContain(CLOUDFRONT_SDK);
      expect(nodeModulesOf(packages).includes(CLOUDFRONT_SDK), group).toBe(group === 'takedowns');
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
  it('installs TOTP packages beside the auth bundle and file-type beside the upload bundle only', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      for (const name of TOTP_PACKAGES) {
        expect(nodeModulesOf(packages).includes(name), `${group} ${name}`).toBe(group === 'auth');
      }
      expect(nodeModulesOf(packages).includes(FILE_TYPE_PACKAGE), group).toBe(group === 'upload');
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
      // Never a static import: that would load them at every cold start, the cost this avoids.
      expect(
        external.filter((entry) => entry.kind !== 'dynamic-import'),
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
      ).toBe(group === 'auth');
      expect(named.has(`${FILE_TYPE_PACKAGE}/core`), group).toBe(group === 'upload');
    }
  }, 120_000);
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
        ...esbuildOptions({ entry: functionEntry('files'), outfile, packages: GROUP_PACKAGES.files }),
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
