// How a function group becomes a Lambda bundle: entry, esbuild options and the packages left outside it.
// The one definition both the CDK construct (infra/service-function.ts) and `npm run build:functions`
// (scripts/bundle.ts, which the benchmarks time) build from, so what is measured is what is deployed.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import type { WorkerName } from '#functions/needs.ts';
import { RENDER_WORKER_BUNDLE } from '#lib/files/render-processes.ts';
import { DOCS_GUIDES, REFERENCE_RENDERER } from '#lib/http/docs-page.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { TFJS_WASM_FILES } from '#lib/moderation/nsfw-model.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Lambda's Node 22 runtime, which the bundles target whatever Node builds them. */
export const BUNDLE_TARGET = 'node22';
export const BUNDLE_MAIN_FIELDS = ['module', 'main'];
export const BUNDLE_MINIFY = true;
/** Source maps without the sources: readable stack traces, a smaller bundle. */
export const BUNDLE_SOURCE_MAP = true;
export const BUNDLE_SOURCES_CONTENT = false;
/** NodejsFunction writes the bundle under this name; the handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';

/** The password hashing addon (auth only). */
export const ARGON2_PACKAGE = '@node-rs/argon2';

/** The image library of the render function: libvips behind a native addon (lib/files/render.ts). */
export const SHARP_PACKAGE = 'sharp';

/** The CPU names npm (npm_config_cpu) and these packages use for Lambda's two architectures. */
export type LambdaCpu = 'arm64' | 'x64';

/** A platform package that must arrive beside the bundle, and the files it must hold there. */
export interface NativeBinary {
  /** Under the asset's node_modules, e.g. `@img/sharp-linux-arm64`. */
  dir: string;
  /** A shell glob inside `dir`. */
  files: string;
}

/**
 * Native addons: esbuild cannot bundle them, so each ships as its package installed beside the bundle,
 * and npm adds the prebuilt binaries as optional dependencies picked by npm_config_cpu, _os and _libc
 * (Lambda's linux, glibc and architecture, not the build machine's). `binaries` are what must have arrived.
 */
export const NATIVE_ADDONS = {
  argon2: {
    package: ARGON2_PACKAGE,
    binaries: (cpu: LambdaCpu): NativeBinary[] => [
      { dir: `@node-rs/argon2-linux-${cpu}-gnu`, files: '*.node' },
    ],
  },
  sharp: {
    package: SHARP_PACKAGE,
    // sharp's own addon and the libvips it links: two packages, both needed at the first require.
    binaries: (cpu: LambdaCpu): NativeBinary[] => [
      { dir: `@img/sharp-linux-${cpu}`, files: 'lib/*.node' },
      { dir: `@img/sharp-libvips-linux-${cpu}`, files: 'lib/libvips-cpp.so.*' },
    ],
  },
} as const;
export type NativeAddon = keyof typeof NATIVE_ADDONS;
export const NATIVE_ADDON_NAMES = Object.keys(NATIVE_ADDONS) as NativeAddon[];

// channel_a's SDK brings its own HTTP stack (urllib, undici, mime-db: two thirds of a payments bundle);
// installed beside the bundle, it is imported on the first channel_a order instead of at every cold start.
export const CHANNEL_A_SDK = 'alipay-sdk';

// Its index assigns `module.exports.default` over a getter-only static `default`: silently ignored in
// sloppy CommonJS, a TypeError at cold start once bundled into (strict) ESM. Installed, it stays CommonJS.
export const CHANNEL_B_SDK = 'wechatpay-axios-plugin';

// The CloudFront client (about 140 KiB) serves only the takedowns worker's batched invalidation
// (lib/platform/cdn/invalidator.ts loads it on a run that has paths to send, so an idle minute's cold start
// does not parse it). Never bundled; installed beside the bundle of the one function that invalidates
// (need `cdn`).
export const CLOUDFRONT_SDK = '@aws-sdk/client-cloudfront';

// The KeyValueStore client and the JS SigV4A signer its API needs: the same worker's deny-list writes only
// (lib/platform/aws/cloudfront.ts loads them on a run with keys to write). Installed beside that bundle.
export const KEY_VALUE_STORE_SDK = [
  '@aws-sdk/client-cloudfront-keyvaluestore',
  '@aws-sdk/signature-v4a',
] as const;

// TOTP (otplib with its @otplib/*, @noble/hashes and @scure/base) and the setup's QR code (uqr): about
// 48 KiB of the accounts bundle that V8 would compile at every cold start, for the few requests that set up or
// check a code (lib/accounts/totp.ts, lib/accounts/qr.ts load them then). Installed beside the accounts bundle.
export const TOTP_PACKAGES = ['otplib', 'uqr'] as const;

// @simplewebauthn/server and what it brings (@peculiar/asn1-*, @levischuck/tiny-cbor, @hexagon/base64...):
// loaded by the passkey requests only (lib/accounts/webauthn.ts). Installed beside the accounts bundle.
export const PASSKEY_PACKAGE = '@simplewebauthn/server';

// file-type and what it brings (strtok3, @tokenizer/*, token-types, debug): about 70 KiB of the upload
// bundle, needed only once an upload's bytes are sniffed (lib/files/sniff.ts loads it then; it imports the
// `file-type/core` subpath, which esbuild leaves external with the package). Installed beside the bundle.
export const FILE_TYPE_PACKAGE = 'file-type';

// ESM bundles still meet CommonJS dependencies that call require(); give them one.
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Powertools' Tracer and the X-Ray SDK under it (about 125 KiB of every bundle): loaded only where tracing
 * is on (lib/platform/observability/tracing.ts). Never bundled; installed beside the bundle on traced stages only, so
 * an untraced function neither parses nor ships them.
 */
export const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';
export const TRACER_PACKAGES = [TRACER_PACKAGE, 'aws-xray-sdk-core'] as const;

export interface GroupPackages {
  /**
   * Native addons shipped built for the Lambda architecture (NATIVE_ADDONS): only the functions that load
   * them. Every other bundle leaves them external too, and the build fails if it imports one.
   */
  native: NativeAddon[];
  /**
   * Packages left out of the bundle and installed beside it: CommonJS that breaks in strict ESM, or packages
   * only a few requests load (by a dynamic import on first use), kept out of the code every cold start compiles.
   */
  installed: string[];
  /**
   * Packages the shared code can name (a lazy import on a path this group never takes) that are neither
   * bundled nor shipped: the function must never reach them, and the deployed-shape test proves it does not.
   */
  unreachable?: string[];
  /**
   * Files of packages the bundle reads at run time, copied to the same path under the asset's node_modules
   * (the moderation model's WebAssembly, lib/moderation/nsfw-model.ts TFJS_WASM_FILES).
   */
  files?: readonly string[];
}

/** What each group (and worker) needs outside its bundle; a Record so a new one does not compile without. */
export const GROUP_PACKAGES: Record<FunctionGroup | WorkerName, GroupPackages> = {
  accounts: { native: ['argon2'], installed: [...TOTP_PACKAGES, PASSKEY_PACKAGE] },
  // Share passwords are argon2id hashes; a share's thumbnails come through its own door, rendered by sharp.
  shares: { native: ['argon2', 'sharp'], installed: [] },
  // sharp for an upload's perceptual hash against the block list (lib/moderation/perceptual-hash.ts), loaded
  // on the first upload's check only.
  files: { native: ['sharp'], installed: [FILE_TYPE_PACKAGE] },
  // The API reference's renderer (lib/http/docs-page.ts): files the page loads, read from the package on
  // their first request; never imported, so not bundled.
  meta: { native: [], installed: [REFERENCE_RENDERER] },
  // Every request renders or serves a rendition: sharp and its libvips, built for the Lambda architecture.
  render: { native: ['sharp'], installed: [] },
  // argon2 for the administrator's password a key or gateway change asks for (lib/billing/payment-security.ts),
  // loaded on that first check only, never at cold start.
  payments: { native: ['argon2'], installed: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Verifies notifications with node:crypto and never creates orders: the channels' SDKs (axios, undici,
  // urllib) are only named by the order-creation path, which this function never takes.
  'payment-callback': { native: [], installed: [], unreachable: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Workers (infra/workers.ts). The drain only writes the table and the bus.
  'outbox-drain': { native: [], installed: [] },
  // Asks the channels about pending orders; the channels' code may reach their SDKs, so they ship as for
  // payments (installed beside the bundle, loaded only when a channel's query path needs them).
  reconciler: { native: [], installed: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Sends the administrators' takedowns to CloudFront once a minute: the deny-list, then an invalidation.
  takedowns: { native: [], installed: [CLOUDFRONT_SDK, ...KEY_VALUE_STORE_SDK] },
  // Mails renewal reminders: the table and the mail channel only.
  reminders: { native: [], installed: [] },
  // Counts the CDN's logs per owner: the table, the log bucket and the mail channel only.
  bandwidth: { native: [], installed: [] },
  // Classifies new files: sharp for the model's input, the model (nsfwjs's MobileNetV2, shipped inside its
  // package as code) and TensorFlow.js bundled; Rekognition's client only where the deployment chose it.
  // node-fetch inside TensorFlow.js names `encoding` in a try (its optional charset conversion, for model
  // downloads this worker never makes): neither bundled nor shipped.
  moderation: { native: ['sharp'], installed: [], files: TFJS_WASM_FILES, unreachable: ['encoding'] },
  // Writes the bans into the WAF's IP sets: the table and the WAF client (bundled) only.
  'ban-mirror': { native: [], installed: [] },
  // Exports (archiver's ZIP streamed through lib-storage's Upload, both bundled) and deletions: the table,
  // the bucket and the mail channel only.
  'account-lifecycle': { native: [], installed: [] },
};

/**
 * Scripts a function starts as processes of its own, each bundled beside its index.mjs under its name, with
 * the same settings and the same packages left out: the render function's render process
 * (lib/files/render-processes.ts), which loads sharp and none of the function's code.
 */
export const PROCESS_ENTRIES: Partial<Record<FunctionGroup | WorkerName, Record<string, string>>> = {
  render: { [RENDER_WORKER_BUNDLE]: 'lib/files/render-worker.ts' },
  shares: { [RENDER_WORKER_BUNDLE]: 'lib/files/render-worker.ts' },
};

/**
 * Shell commands for the CDK build's afterBundling hook: each of the group's PROCESS_ENTRIES bundled into the
 * asset with the project's esbuild, as esbuildOptions says (NodejsFunction bundles one entry only).
 */
export function processEntryCommands(
  inputDir: string,
  outputDir: string,
  group: FunctionGroup | WorkerName,
): string[] {
  const external = externalModulesOf(GROUP_PACKAGES[group]).map((name) => `--external:${name}`);
  return Object.entries(PROCESS_ENTRIES[group] ?? {}).map(([file, entry]) =>
    [
      `"${inputDir}/node_modules/.bin/esbuild" "${inputDir}/${entry}"`,
      `--bundle --platform=node --format=esm --target=${BUNDLE_TARGET}`,
      `--main-fields=${BUNDLE_MAIN_FIELDS.join(',')} --banner:js="${ESM_REQUIRE_BANNER}"`,
      `${BUNDLE_MINIFY ? '--minify ' : ''}${BUNDLE_SOURCE_MAP ? '--sourcemap ' : ''}--sources-content=${BUNDLE_SOURCES_CONTENT}`,
      `--log-level=warning ${external.join(' ')} --outfile="${outputDir}/${file}"`,
    ].join(' '),
  );
}

/** Shell commands for the afterBundling hook: each of the group's package files copied beside the bundle. */
export function packageFileCommands(inputDir: string, outputDir: string, packages: GroupPackages): string[] {
  return (packages.files ?? []).map((path) => {
    const target = `${outputDir}/node_modules/${path}`;
    return `mkdir -p "$(dirname "${target}")" && cp "${inputDir}/node_modules/${path}" "${target}"`;
  });
}

/** Project files a function reads at run time, beside its bundle at the same path (the reference's guides). */
export const PROJECT_FILES: Partial<Record<FunctionGroup | WorkerName, readonly string[]>> = {
  meta: DOCS_GUIDES.map((name) => `docs/${name}`),
};

/** Shell commands for the afterBundling hook: each of the group's PROJECT_FILES copied beside the bundle. */
export function projectFileCommands(inputDir: string, outputDir: string, group: FunctionGroup | WorkerName) {
  return (PROJECT_FILES[group] ?? []).map(
    (path) =>
      `mkdir -p "$(dirname "${outputDir}/${path}")" && cp "${inputDir}/${path}" "${outputDir}/${path}"`,
  );
}

/** functions/<group>/handler.ts, exporting `handler`. */
export function functionEntry(group: FunctionGroup | WorkerName): string {
  return join(PROJECT_ROOT, 'functions', group, 'handler.ts');
}

/** Packages installed beside the bundle (node_modules of the Lambda package); the tracer where traced. */
export function nodeModulesOf(packages: GroupPackages, options: { tracing?: boolean } = {}): string[] {
  return [
    ...packages.native.map((addon) => NATIVE_ADDONS[addon].package),
    ...packages.installed,
    ...(options.tracing ? [TRACER_PACKAGE] : []),
  ];
}

/**
 * Packages esbuild must not bundle. Every native addon is external for every group: one that does not ship
 * it must not import it either (nativeImportCheck, after each CDK build).
 */
export function externalModulesOf(packages: GroupPackages): string[] {
  return [
    ...new Set([
      ...NATIVE_ADDON_NAMES.map((addon) => NATIVE_ADDONS[addon].package),
      ...TRACER_PACKAGES,
      CLOUDFRONT_SDK,
      ...KEY_VALUE_STORE_SDK,
      ...packages.installed,
      ...(packages.unreachable ?? []),
    ]),
  ];
}

/**
 * esbuild's JS API options for one bundle, the same settings NodejsFunction passes to the esbuild CLI
 * (it always bundles; `bundleAwsSDK: true` keeps the pinned SDK inside rather than the runtime's).
 */
export function esbuildOptions(input: {
  entry: string;
  outfile: string;
  packages: GroupPackages;
}): BuildOptions {
  return {
    entryPoints: [input.entry],
    outfile: input.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE_TARGET,
    mainFields: BUNDLE_MAIN_FIELDS,
    banner: { js: ESM_REQUIRE_BANNER },
    minify: BUNDLE_MINIFY,
    sourcemap: BUNDLE_SOURCE_MAP,
    sourcesContent: BUNDLE_SOURCES_CONTENT,
    external: externalModulesOf(input.packages),
    absWorkingDir: PROJECT_ROOT,
    logLevel: 'warning',
  };
}

/**
 * A shell command for the CDK build's afterBundling hook: fails the build when a binary of the addon for
 * `cpu` did not arrive beside the bundle (e.g. npm ignored npm_config_cpu and installed the build
 * machine's), which would otherwise fail only at the function's first require in Lambda.
 */
export function nativeBinaryCheck(outputDir: string, addon: NativeAddon, cpu: LambdaCpu): string {
  const { package: name, binaries } = NATIVE_ADDONS[addon];
  return binaries(cpu)
    .map(({ dir, files }) => {
      const path = `${outputDir}/node_modules/${dir}`;
      return `ls "${path}"/${files} >/dev/null 2>&1 || { echo "missing ${path}/${files}: ${name} not installed for Lambda (${cpu})" >&2; exit 1; }`;
    })
    .join(' && ');
}

/**
 * A shell command for the afterBundling hook: fails the build when a bundle that does not ship the addon
 * imports it anyway (it would crash at that import). esbuild writes every import path, static or dynamic,
 * as a double-quoted string.
 */
export function nativeImportCheck(outputDir: string, addon: NativeAddon, group: string): string {
  const name = NATIVE_ADDONS[addon].package;
  return (
    `! grep -qF '"${name}"' "${outputDir}/${BUNDLE_FILE}" || ` +
    `{ echo "${group} imports ${name}; ship it (GROUP_PACKAGES native: ['${addon}'])" >&2; exit 1; }`
  );
}

/** Every native addon's check for one group: its own arrived for `cpu`, the others are never imported. */
export function nativeChecks(
  outputDir: string,
  group: string,
  packages: GroupPackages,
  cpu: LambdaCpu,
): string[] {
  return NATIVE_ADDON_NAMES.map((addon) =>
    packages.native.includes(addon)
      ? nativeBinaryCheck(outputDir, addon, cpu)
      : nativeImportCheck(outputDir, addon, group),
  );
}
