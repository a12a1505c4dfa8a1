// How a function group becomes a Lambda bundle: entry, esbuild options and the packages left outside it.
// The one definition both the CDK construct (infra/service-function.ts) and `npm run build:functions`
// (scripts/bundle.ts, which the benchmarks time) build from, so what is measured is what is deployed.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import type { WorkerName } from '#functions/needs.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';

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

/** The native addon that esbuild cannot bundle; it ships as a package built for the Lambda architecture. */
export const ARGON2_PACKAGE = '@node-rs/argon2';

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

// TOTP (otplib with its @otplib/*, @noble/hashes and @scure/base) and the setup's QR code (uqr): about
// 48 KiB of the auth bundle that V8 would compile at every cold start, for the few requests that set up or
// check a code (lib/accounts/totp.ts, lib/accounts/qr.ts load them then). Installed beside the auth bundle.
export const TOTP_PACKAGES = ['otplib', 'uqr'] as const;

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
  /** Ship @node-rs/argon2 built for the Lambda architecture (only functions that hash passwords). */
  nativeArgon2: boolean;
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
}

/** What each group (and worker) needs outside its bundle; a Record so a new one does not compile without. */
export const GROUP_PACKAGES: Record<FunctionGroup | WorkerName, GroupPackages> = {
  auth: { nativeArgon2: true, installed: [...TOTP_PACKAGES] },
  upload: { nativeArgon2: false, installed: [FILE_TYPE_PACKAGE] },
  files: { nativeArgon2: false, installed: [] },
  // sharp and its libvips, built for the Lambda architecture (docs/IMAGES.md).
  render: { nativeArgon2: false, installed: ['sharp'] },
  payments: { nativeArgon2: false, installed: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Verifies notifications with node:crypto and never creates orders: the channels' SDKs (axios, undici,
  // urllib) are only named by the order-creation path, which this function never takes.
  'payment-callback': { nativeArgon2: false, installed: [], unreachable: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Workers (infra/workers.ts). The drain only writes the table and the bus.
  'outbox-drain': { nativeArgon2: false, installed: [] },
  // Asks the channels about pending orders; the channels' code may reach their SDKs, so they ship as for
  // payments (installed beside the bundle, loaded only when a channel's query path needs them).
  reconciler: { nativeArgon2: false, installed: [CHANNEL_A_SDK, CHANNEL_B_SDK] },
  // Sends the administrators' takedowns to CloudFront once a minute.
  takedowns: { nativeArgon2: false, installed: [CLOUDFRONT_SDK] },
};

/** functions/<group>/handler.ts, exporting `handler`. */
export function functionEntry(group: FunctionGroup | WorkerName): string {
  return join(PROJECT_ROOT, 'functions', group, 'handler.ts');
}

/** Packages installed beside the bundle (node_modules of the Lambda package); the tracer where traced. */
export function nodeModulesOf(packages: GroupPackages, options: { tracing?: boolean } = {}): string[] {
  return [
    ...(packages.nativeArgon2 ? [ARGON2_PACKAGE] : []),
    ...packages.installed,
    ...(options.tracing ? [TRACER_PACKAGE] : []),
  ];
}

/**
 * Packages esbuild must not bundle. The addon is external for every group: one that does not ship it
 * must not import it either (the CDK construct checks the bundle after building).
 */
export function externalModulesOf(packages: GroupPackages): string[] {
  return [
    ...new Set([
      ARGON2_PACKAGE,
      ...TRACER_PACKAGES,
      CLOUDFRONT_SDK,
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
