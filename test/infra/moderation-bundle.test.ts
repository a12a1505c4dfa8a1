// The moderation worker's Lambda package (infra/bundling.ts GROUP_PACKAGES.moderation): nsfwjs's model and
// TensorFlow.js inside the bundle, the backend's WebAssembly copied beside it by the CDK hook
// (packageFileCommands), sharp installed. Laid out so, in a folder of its own (nothing of this project's
// node_modules to fall back on but sharp), it classifies under plain node, and the whole package stays far
// under Lambda's 250 MB unzipped limit.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_FILE,
  esbuildOptions,
  functionEntry,
  GROUP_PACKAGES,
  nodeModulesOf,
  PROJECT_ROOT,
  packageFileCommands,
} from '#infra/bundling.ts';
import { TFJS_WASM_FILES } from '#lib/moderation/nsfw-model.ts';
import { photoJpeg } from '#test/support/images.ts';

/** Lambda's limit on a function's unzipped package (its code and layers). */
const LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024;

const dir = mkdtempSync(join(tmpdir(), 'moderation-package-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Bytes under a path, links not followed (sharp is linked, and counted from the project's copy). */
function bytesUnder(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
}

const packages = GROUP_PACKAGES.moderation;

describe("the moderation worker's package", () => {
  it('bundles the model, gets its WebAssembly from the CDK hook, and stays far under the unzipped limit', async () => {
    const asset = join(dir, 'asset');
    await build({
      ...esbuildOptions({ entry: functionEntry('moderation'), outfile: join(asset, BUNDLE_FILE), packages }),
      sourcemap: false,
      logLevel: 'silent',
    });
    for (const command of packageFileCommands(PROJECT_ROOT, asset, packages)) {
      expect(spawnSync('sh', ['-c', command], { encoding: 'utf8' }).status, command).toBe(0);
    }
    for (const path of TFJS_WASM_FILES)
      expect(existsSync(join(asset, 'node_modules', path)), path).toBe(true);
    const bundle = statSync(join(asset, BUNDLE_FILE)).size;
    // The model's weights (about 3.5 MB as base64) are inside: nothing is fetched or read from nsfwjs.
    expect(bundle).toBeGreaterThan(3 * 1024 * 1024);
    expect(nodeModulesOf(packages)).toEqual(['sharp']);
    // sharp and its libvips as installed here (Lambda's arm64 build is the same size within a few MB).
    const sharp = ['sharp', '@img'].map((name) => bytesUnder(join(PROJECT_ROOT, 'node_modules', name)));
    const total = bundle + bytesUnder(join(asset, 'node_modules')) + sharp.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThan(LAMBDA_UNZIPPED_LIMIT / 4);
  }, 120_000);

  it('classifies from that layout under plain node: the model and the WebAssembly load from the package', async () => {
    // The classifier as the worker's bundle holds it, in a package laid out as above.
    const layout = join(dir, 'run');
    mkdirSync(join(layout, 'node_modules'), { recursive: true });
    const entry = join(layout, 'entry.ts');
    writeFileSync(
      entry,
      [
        `import { readFileSync } from 'node:fs';`,
        `import { classifierFor } from '${join(PROJECT_ROOT, 'lib/moderation/classifier.ts')}';`,
        `const classifier = await classifierFor('nsfwjs', { maxInputPixels: 50_000_000, region: 'us-east-1' });`,
        `console.log(JSON.stringify(await classifier.classify(readFileSync(process.argv[2]))));`,
      ].join('\n'),
    );
    await build({
      ...esbuildOptions({ entry, outfile: join(layout, BUNDLE_FILE), packages }),
      sourcemap: false,
      logLevel: 'silent',
    });
    for (const command of packageFileCommands(PROJECT_ROOT, layout, packages)) {
      expect(spawnSync('sh', ['-c', command]).status).toBe(0);
    }
    symlinkSync(join(PROJECT_ROOT, 'node_modules', 'sharp'), join(layout, 'node_modules', 'sharp'), 'dir');
    const image = join(layout, 'photo.jpg');
    writeFileSync(image, await photoJpeg(640, 480));

    const run = spawnSync(process.execPath, [join(layout, BUNDLE_FILE), image], {
      cwd: layout,
      encoding: 'utf8',
      timeout: 60_000,
    });

    expect(run.status, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(answer.labels.map((label: { name: string }) => label.name).sort()).toEqual([
      'Drawing',
      'Hentai',
      'Neutral',
      'Porn',
      'Sexy',
    ]);
    expect(answer.score).toBeGreaterThanOrEqual(0);
    expect(answer.score).toBeLessThanOrEqual(1);
  }, 120_000);
});
