// What each bundle holds (infra/bundling.ts): the Tracer and the X-Ray SDK are never inside a bundle; they
// ship beside it only on traced stages, so an untraced function neither parses nor ships them. Zod is there
// as zod/mini with the English locale only (lib/zod.ts), never classic zod.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import {
  CLOUDFRONT_SDK,
  esbuildOptions,
  externalModulesOf,
  functionEntry,
  GROUP_PACKAGES,
  nodeModulesOf,
  TRACER_PACKAGE,
  TRACER_PACKAGES,
} from '../../infra/bundling.ts';
import type { FunctionGroup } from '../../lib/routes.ts';

describe('bundles and the CloudFront client', () => {
  it('keeps the CloudFront SDK out of every bundle, shipped beside the one group that invalidates', () => {
    for (const [group, packages] of Object.entries(GROUP_PACKAGES)) {
      expect(externalModulesOf(packages), group).toContain(CLOUDFRONT_SDK);
      expect(nodeModulesOf(packages).includes(CLOUDFRONT_SDK), group).toBe(group === 'upload');
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
