// `npm run bench`: in one process, on DynamoDB Local (in memory) and s3rver, what holds on AWS (each main
// path's critical-path waits against its floor, CPU of our code per request against an SDK-only baseline,
// the cold path against an SDK-only yardstick, the partition heat of a load mix predicted at the target
// load), beside the wall-clock ratios against the stand-ins (reported, not goals), bundle sizes, memory and
// a load run. Prints readable tables, then one last line `BENCH {json}`. Never part of `npm test`.
//
// `npm run bench -- --check` exits 1 when a goal is missed (never part of npm test).
//
// Options (environment): BENCH_ROUNDS (3), BENCH_LOAD_SECONDS (20), BENCH_CONNECTIONS (32),
// BENCH_IMPORT_RUNS (9 per round), BENCH_ME_ITERATIONS (1000 per round), BENCH_LOGIN_ITERATIONS (40),
// BENCH_UPLOAD_ITERATIONS (30), BENCH_ORDER_ITERATIONS (100), BENCH_MEMORY (1; 0 skips the memory runs),
// BENCH_NODE_OPTIONS ('' as the functions run in AWS; '--enable-source-maps' to see what the maps cost),
// BENCH_CPU_ITERATIONS (30 per path; logins 10), BENCH_MIX_ACCOUNTS (50), BENCH_MIX_ROUNDS (2),
// BENCH_RENDITION_RUNS (7 first renders per side), BENCH_RENDITION_STORED_ITERATIONS (30),
// BENCH_MODERATION_COLD_RUNS (5 fresh processes), BENCH_MODERATION_IMAGES (10).
//
// `npm run bench -- --only renditions` runs the rendition figures alone (renditions.ts), on the same
// stand-ins, with their goals; `--only cpu` the CPU figure alone (BENCH_CPU_PATHS: some paths only);
// `--only moderation` the moderation classifier's cold start and per-image time (moderation.ts), no stand-ins.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal } from '#infra/local/dynamodb-local.ts';
import { startStandInProcess } from '#infra/local/stand-ins.ts';
import { anonymousRenditionsPerOriginal, presetsOf } from '#lib/files/rendition-access.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import {
  DEFAULT_IMAGE_PRESETS,
  DEFAULT_IMAGE_QUALITIES,
  DEFAULT_IMAGE_WIDTHS,
} from '#lib/platform/config/schema.ts';
import { worstHour } from './capacity-cost.ts';
import { runColdImport } from './cold-import.ts';
import { coldPaths, ONE_TIME_WAIT_MS } from './cold-path.ts';
import { heatFigures, PARTITION_LIMITS, predict, TARGET_RATES } from './heat-model.ts';
import type { ModerationReport } from './moderation.ts';
// Types only: renditions.ts imports the render handler, which reads the settings at import.
import type { RenditionReport } from './renditions.ts';
import { ms, table } from './stats.ts';

function option(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return value;
}

// The goals (docs/PERFORMANCE.md): what holds on AWS. The wall-clock ratios against the stand-ins measure
// the JVM emulator as much as the service, so they are reported, not goals.
const GOALS = {
  hot_key_wcu_at_target: PARTITION_LIMITS.wcu / 2,
  hot_key_rcu_at_target: PARTITION_LIMITS.rcu / 2,
  // docs/DESIGN.md 24: every key still within its partition at ten times the target.
  hot_key_wcu_at_10x: PARTITION_LIMITS.wcu,
  hot_key_rcu_at_10x: PARTITION_LIMITS.rcu,
  waits_over_floor: 0,
  cpu_ratio_max: 1.5,
  cold_path_ratio_max: 1.6,
  bundle_kb_max: 1024,
  confirm_peak_rss_mib: 384,
  // A first render over sharp alone making the same storage calls (renditions.ts), and a stored rendition
  // served over an original of the same bytes: our code around sharp and around the read.
  rendition_ratio: 1.3,
  stored_ratio: 1.2,
  // docs/CAPACITY.md "The worst hour": one anonymous address at the WAF's limits, on each route whose
  // cost a count bounds (a large original's bytes are bounded by its owner's bandwidth instead).
  worst_hour_usd_max: 0.1,
  // docs/DESIGN.md 23: at INFO, at most one line of at most 600 bytes a request (log-bytes.ts).
  log_bytes_per_request_max: 600,
  // Distinct stored renditions an anonymous client can force per original (docs/IMAGES.md).
  anon_renders_per_original_max: 12,
} as const;

/**
 * Computed, not measured: presets x the formats `f` may name beside one, from the default `images.presets`
 * (the bench reads no stage's settings); test/e2e/files/rendition-access.test.ts counts them in storage.
 */
const ANON_RENDERS_PER_ORIGINAL = anonymousRenditionsPerOriginal(
  presetsOf(DEFAULT_IMAGE_PRESETS, { widths: DEFAULT_IMAGE_WIDTHS, qualities: DEFAULT_IMAGE_QUALITIES }),
);

/** The static upload token of the bench's settings: the load mix includes uploads made with it. */
const STATIC_TOKEN = 'bench-static-upload-token-0001';

const ARGS = process.argv.slice(2);
const CHECK = ARGS.includes('--check');
/** `--only renditions`, `log-bytes`, `cpu` or `moderation` (or `--only=...`): one part of the bench alone. */
const ONLY = (() => {
  const at = ARGS.findIndex((arg) => arg === '--only' || arg.startsWith('--only='));
  if (at < 0) return undefined;
  const value = ARGS[at]!.includes('=') ? ARGS[at]!.slice('--only='.length) : ARGS[at + 1];
  if (value !== 'renditions' && value !== 'log-bytes' && value !== 'cpu' && value !== 'moderation')
    throw new Error(
      `--only: the parts to run alone are renditions, log-bytes, cpu and moderation, not ${value}`,
    );
  return value;
})();

interface MemoryReport {
  object_mib: number;
  confirm_peak_rss_mib: number;
  direct_upload_bytes: number;
  direct_upload_peak_rss_mib: number;
  settled_rss_mib: number;
}

/** test/perf/memory.ts in a process of its own (its peak is the function's, not this runner's). */
function runMemory(): MemoryReport {
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(import.meta.dirname, 'memory.ts')],
    { env: process.env, encoding: 'utf8', timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const line = child.stdout.split('\n').find((entry) => entry.startsWith('MEMORY '));
  if (child.status !== 0 || !line) {
    throw new Error(`memory run failed (${child.status}): ${child.stderr.slice(-2000)}`);
  }
  return JSON.parse(line.slice('MEMORY '.length)) as MemoryReport;
}

interface LogBytesReport {
  log_bytes_per_request_max: number;
  log_lines_per_request_max: number;
  per_path: Record<string, { bytes_max: number; lines_max: number }>;
}

/** The groups log-bytes.ts drives: one process each, its service name the group's, as in prod. */
const LOG_BYTES_GROUPS = ['accounts', 'files', 'meta'] as const;

/** test/perf/log-bytes.ts in a process of its own per group (its logging at INFO, as Lambda runs in prod). */
function runLogBytes(): LogBytesReport {
  const reports = LOG_BYTES_GROUPS.map((group) => {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'log-bytes.ts'), group],
      { env: process.env, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
    );
    // LOGBYTES_SHOW=1: the lines themselves, to see what a request wrote.
    if (process.env.LOGBYTES_SHOW) process.stderr.write(child.stderr);
    const line = child.stdout.split('\n').find((entry) => entry.startsWith('LOGBYTES '));
    if (child.status !== 0 || !line) {
      throw new Error(`log bytes run of ${group} failed (${child.status}): ${child.stderr.slice(-2000)}`);
    }
    return JSON.parse(line.slice('LOGBYTES '.length)) as LogBytesReport;
  });
  return {
    log_bytes_per_request_max: Math.max(...reports.map((report) => report.log_bytes_per_request_max)),
    log_lines_per_request_max: Math.max(...reports.map((report) => report.log_lines_per_request_max)),
    per_path: Object.assign({}, ...reports.map((report) => report.per_path)),
  };
}

/** The worst hour of docs/CAPACITY.md: the dearest route a count bounds, and the one it does not. */
function worstHourFigures() {
  const rows = worstHour();
  const dollars = (bounded: boolean) =>
    Math.max(...rows.filter((row) => row.unbounded !== bounded).map((row) => row.dollars));
  return {
    worst_hour_usd_max: Number(dollars(true).toFixed(3)),
    worst_hour_usd_large_original: Number(dollars(false).toFixed(3)),
  };
}

const verdict = (value: number, goal: number) => (value <= goal ? 'met' : 'MISSED');

interface StandIns {
  /** This run's directory (s3rver's files, the rendition figures' JPEG), removed by stop(). */
  scratch: string;
  stop(): Promise<void>;
}

/** DynamoDB Local and s3rver started, the settings pointed at them, the table and bucket provisioned. */
async function startStandIns(): Promise<StandIns> {
  const scratch = mkdtempSync(join(tmpdir(), 'service-bench-'));
  const [dynamo, s3] = await Promise.all([
    startDynamoLocal(),
    // Its own process, as S3 is remote in AWS: its request handling must not share our thread.
    startStandInProcess('s3', scratch),
  ]);
  const stop = async () => {
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    // The configuration is read once, at the first import of lib/platform/config: set it before importing any.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    process.env.APP_CONFIG_JSON = JSON.stringify({
      stage: 'bench',
      base_url: 'http://localhost:3000',
      log: { level: 'silent' },
      upload: { api_token: STATIC_TOKEN },
    });
    process.env.LOG__LEVEL = 'silent';
    process.env.BASE_URL = 'http://localhost:3000';
    process.env.AWS__DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.AWS__S3_ENDPOINT = s3.endpoint;
    process.env.TABLE_NAME = 'bench';
    process.env.BUCKET_NAME = 'bench';
    process.env.DATA_DIR = join(scratch, 'data');
    const { provisionTestStack } = await import('#test/support/stack.ts');
    await provisionTestStack();
    return { scratch, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The rendition figures (renditions.ts), printed; run after startStandIns. */
async function renditionFigures(
  settings: { renditionRuns: number; renditionStoredIterations: number; memory: boolean },
  scratch: string,
): Promise<RenditionReport> {
  console.log(
    `\nrenditions: a 24-megapixel photo-like JPEG (6000x4000) to w=480 webp, ${settings.renditionRuns} first renders per side; a stored rendition served ${settings.renditionStoredIterations} times beside an original of its bytes${settings.memory ? '; peak RSS of one render of the largest source accepted, in processes of their own' : ''} ...`,
  );
  const { measureRenditions } = await import('./renditions.ts');
  const report = await measureRenditions({
    runs: settings.renditionRuns,
    storedIterations: settings.renditionStoredIterations,
    memory: settings.memory,
    scratch,
  });
  const vips =
    report.vipsthumbnail_ms === null
      ? 'not measured (not installed, see above)'
      : `${ms(report.vipsthumbnail_ms)} (start-up alone ${ms(report.vipsthumbnail_start_ms ?? 0)})`;
  console.log(
    table(
      ['rendition (wall clock, median)', 'figure', 'ms'],
      [
        [
          'first render: GET /i/<key>?w=480&f=webp through the handler (stored copy missed, original read, render, store)',
          'rendition_first_ms',
          ms(report.rendition_first_ms),
        ],
        [
          'sharp alone, the same pipeline, with the same calls on the bare SDK (stored copy missed, original read, PutObject ‖ HeadObject)',
          'sharp_alone_ms',
          ms(report.sharp_alone_ms),
        ],
        [
          `${report.vipsthumbnail_version ?? 'vipsthumbnail'}: vipsthumbnail -s 480x -o out.webp[Q=75,strip], a process each`,
          'vipsthumbnail_ms',
          vips,
        ],
        ['first render over sharp alone', 'rendition_ratio', report.rendition_ratio.toFixed(2)],
        [
          'the same query again: the stored rendition served',
          'rendition_stored_ms',
          ms(report.rendition_stored_ms),
        ],
        [
          'the same bytes as an original, GET /i/<key> without a query',
          'original_ms',
          ms(report.original_ms),
        ],
        ['stored rendition over the original', 'stored_ratio', report.stored_ratio.toFixed(2)],
        [
          "the stored rendition's call alone, bare SDK (the stored copy read whole)",
          'stored_calls_ms',
          ms(report.stored_calls_ms),
        ],
      ],
    ),
  );
  console.log(
    `source ${(report.source_bytes / 1024 / 1024).toFixed(2)} MiB, rendition ${report.rendition_bytes} bytes; sharp's libvips ${report.sharp_libvips_version}, ${report.vips_concurrency} thread(s) per image on both sides; first renders ${report.samples.first_ms.join(' ')}; sharp alone ${report.samples.sharp_alone_ms.join(' ')}${report.samples.vipsthumbnail_ms.length > 0 ? `; vipsthumbnail ${report.samples.vipsthumbnail_ms.join(' ')}` : ''}`,
  );
  if (report.memory) {
    const memory = report.memory;
    console.log(
      `render_peak_rss_mib: ${memory.peak_rss_mib} MiB, one render of a ${memory.source_width}x${memory.source_height} JPEG (${(memory.source_bytes / 1024 / 1024).toFixed(1)} MiB, the largest 3:2 source images.max_input_pixels accepts) to w=480 webp; the highest VmHWM of ${memory.peak_rss_samples_mib.length} processes of their own (${memory.peak_rss_samples_mib.join(', ')}; sampled ${memory.sampled_peak_rss_mib}; ${memory.before_render_rss_mib} before the render); the function has ${memory.function_memory_mb} MB`,
    );
  }
  return report;
}

/** The figures of the JSON line from a rendition report. */
function renditionJson(report: RenditionReport) {
  return {
    rendition_first_ms: report.rendition_first_ms,
    vipsthumbnail_ms: report.vipsthumbnail_ms,
    sharp_alone_ms: report.sharp_alone_ms,
    rendition_ratio: report.rendition_ratio,
    rendition_stored_ms: report.rendition_stored_ms,
    original_ms: report.original_ms,
    stored_ratio: report.stored_ratio,
    render_peak_rss_mib: report.memory?.peak_rss_mib ?? null,
    anon_renders_per_original_max: ANON_RENDERS_PER_ORIGINAL,
  };
}

function renditionGoals(report: RenditionReport) {
  return [
    ['rendition_ratio', report.rendition_ratio, GOALS.rendition_ratio],
    ['stored_ratio', report.stored_ratio, GOALS.stored_ratio],
    ['anon_renders_per_original_max', ANON_RENDERS_PER_ORIGINAL, GOALS.anon_renders_per_original_max],
  ] as const;
}

function printGoals(summary: ReadonlyArray<readonly [string, number, number]>): void {
  console.log('\ngoals:');
  console.log(
    table(
      ['figure', 'value', 'goal'],
      summary.map(([name, value, goal]) => [name, value, `<= ${goal} ${verdict(value, goal)}`]),
    ),
  );
}

function checkGoals(summary: ReadonlyArray<readonly [string, number, number]>): void {
  const missed = summary.filter(([, value, goal]) => value > goal).map(([name]) => name);
  if (CHECK && missed.length > 0) {
    console.error(`bench --check: goals missed: ${missed.join(', ')}`);
    process.exitCode = 1;
  }
}

/** The moderation classifier's figures (moderation.ts), printed; reported, not goals. Needs no stand-in. */
async function moderationFigures(settings: { coldRuns: number; images: number }): Promise<ModerationReport> {
  console.log(
    `\nmoderation: nsfwjs on a bundle as deployed, ${settings.coldRuns} fresh processes to the first answer; then ${settings.images} photo-like 4000x3000 JPEGs classified in this process ...`,
  );
  const { measureModeration } = await import('./moderation.ts');
  const report = await measureModeration(settings);
  console.log(
    table(
      ['moderation (wall clock, median)', 'figure', 'ms'],
      [
        [
          `cold start: process start to the first answer (bundle ${report.bundle_kb} KiB: Node, parse, model load, one image)`,
          'moderation_cold_start_ms',
          ms(report.moderation_cold_start_ms),
        ],
        [
          'of which process start to the bundle evaluated',
          'moderation_cold_ready_ms',
          ms(report.moderation_cold_ready_ms),
        ],
        [
          'one 4000x3000 JPEG classified, the model loaded',
          'moderation_per_image_ms',
          ms(report.moderation_per_image_ms),
        ],
        [
          'of which its decode (shrunk on load) and resize to 224x224',
          'moderation_decode_ms',
          ms(report.moderation_decode_ms),
        ],
      ],
    ),
  );
  console.log(
    `cold starts ${report.samples.cold_ms.join(' ')} (resident set then ${report.moderation_cold_rss_mib} MiB; console output besides the figures: ${report.moderation_cold_console_bytes} bytes); per image ${report.samples.per_image_ms.join(' ')}; decode ${report.samples.decode_ms.join(' ')}`,
  );
  return report;
}

/** The figures of the JSON line from a moderation report. */
function moderationJson(report: ModerationReport) {
  return {
    moderation_cold_start_ms: report.moderation_cold_start_ms,
    moderation_per_image_ms: report.moderation_per_image_ms,
  };
}

/** `--only cpu`: the stand-ins and the CPU per request of each main path against its baseline. */
async function onlyCpu(iterations: number): Promise<void> {
  const standIns = await startStandIns();
  try {
    const { measureAwsFigures } = await import('./aws-figures.ts');
    const { pngOf, varied, UPLOAD_BYTES } = await import('./in-process.ts');
    const bigPng = pngOf(UPLOAD_BYTES);
    let uploads = 1_000_000;
    const aws = await measureAwsFigures({
      iterations,
      loginIterations: Math.min(40, iterations),
      uploadBytes: () => varied(bigPng, ++uploads),
      only: process.env.BENCH_CPU_PATHS?.split(','),
    });
    console.log(
      table(
        ['path', 'CPU ms', 'SDK-only CPU ms', 'CPU ratio'],
        Object.entries(aws.paths).map(([name, entry]) => [
          name,
          ms(entry.cpu_ms),
          ms(entry.baseline_cpu_ms),
          entry.cpu_ratio.toFixed(2),
        ]),
      ),
    );
    const summary = [['cpu_ratio_max', aws.cpu_ratio_max, GOALS.cpu_ratio_max]] as const;
    printGoals(summary);
    console.log(`BENCH ${JSON.stringify({ cpu_ratio_max: aws.cpu_ratio_max, aws_paths: aws.paths })}`);
    checkGoals(summary);
  } finally {
    await standIns.stop();
  }
}

/** `--only renditions`: the stand-ins and the rendition figures, nothing else. */
async function onlyRenditions(
  settings: Parameters<typeof renditionFigures>[0],
  machine: Record<string, unknown>,
  started: number,
): Promise<void> {
  const standIns = await startStandIns();
  try {
    const report = await renditionFigures(settings, standIns.scratch);
    const summary = renditionGoals(report);
    printGoals(summary);
    const seconds = (performance.now() - started) / 1000;
    console.log(`\n(${seconds.toFixed(0)} s in all)`);
    const bench = { ...renditionJson(report), renditions: report, machine, seconds: Math.round(seconds) };
    console.log(`BENCH ${JSON.stringify(bench)}`);
    checkGoals(summary);
  } finally {
    await standIns.stop();
  }
}

async function main(): Promise<void> {
  const settings = {
    rounds: option('BENCH_ROUNDS', 3),
    loadSeconds: option('BENCH_LOAD_SECONDS', 20),
    connections: option('BENCH_CONNECTIONS', 32),
    importRuns: option('BENCH_IMPORT_RUNS', 9),
    meIterations: option('BENCH_ME_ITERATIONS', 1000),
    loginIterations: option('BENCH_LOGIN_ITERATIONS', 40),
    uploadIterations: option('BENCH_UPLOAD_ITERATIONS', 30),
    memory: process.env.BENCH_MEMORY !== '0',
    orderIterations: option('BENCH_ORDER_ITERATIONS', 100),
    nodeOptions: process.env.BENCH_NODE_OPTIONS ?? '',
    cpuIterations: option('BENCH_CPU_ITERATIONS', 80),
    mixAccounts: option('BENCH_MIX_ACCOUNTS', 50),
    mixRounds: option('BENCH_MIX_ROUNDS', 2),
    renditionRuns: option('BENCH_RENDITION_RUNS', 7),
    renditionStoredIterations: option('BENCH_RENDITION_STORED_ITERATIONS', 30),
    moderation: {
      coldRuns: option('BENCH_MODERATION_COLD_RUNS', 5),
      images: option('BENCH_MODERATION_IMAGES', 10),
    },
  };
  const started = performance.now();
  const machine = {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Number((totalmem() / 1024 ** 3).toFixed(1)),
    free_memory_gb: Number((freemem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
  console.log(
    `machine: ${machine.cpus} x ${machine.cpu_model}, ${machine.memory_gb} GB, node ${machine.node} (${machine.platform})`,
  );

  if (ONLY === 'renditions') return onlyRenditions(settings, machine, started);
  if (ONLY === 'cpu') return onlyCpu(settings.cpuIterations);
  if (ONLY === 'moderation') {
    const report = await moderationFigures(settings.moderation);
    console.log(`BENCH ${JSON.stringify({ ...moderationJson(report), moderation: report, machine })}`);
    return;
  }
  if (ONLY === 'log-bytes') {
    const standIns = await startStandIns();
    try {
      console.log(`BENCH ${JSON.stringify({ ...runLogBytes(), ...worstHourFigures() })}`);
    } finally {
      await standIns.stop();
    }
    return;
  }

  // Cold import first, before the stand-ins compete for the two cores.
  console.log(
    `\ncold import: bundling the ${FUNCTION_GROUPS.length} groups, ${settings.rounds} rounds of ${settings.importRuns} fresh processes each ...`,
  );
  const coldImport = await runColdImport({
    runs: settings.importRuns,
    rounds: settings.rounds,
    nodeOptions: settings.nodeOptions,
  });
  console.log(
    table(
      [
        'group',
        'bundle KiB',
        'import p50 ms',
        'SDK-only KiB',
        'SDK-only p50 ms',
        'ratio',
        'rounds',
        'Powertools KiB',
        'largest packages (KiB)',
      ],
      coldImport.groups.map((entry) => [
        entry.group,
        entry.bundle_kb,
        ms(entry.import_p50_ms),
        entry.baseline_kb,
        ms(entry.baseline_p50_ms),
        entry.ratio.toFixed(2),
        entry.round_ratios.map((ratio) => ratio.toFixed(2)).join(' '),
        entry.powertools_kb,
        entry.top_packages
          .slice(0, 4)
          .map(([name, kb]) => `${name} ${kb}`)
          .join(', '),
      ]),
    ),
  );

  if (coldImport.powertools) {
    const tools = coldImport.powertools;
    console.log(
      `Powertools alone (${tools.imports.join(', ')}): ${tools.bundle_kb} KiB, import p50 ${ms(tools.import_p50_ms)} ms (an empty bundle: ${ms(tools.empty_p50_ms)} ms)`,
    );
  }

  const coldPath = coldPaths(coldImport.groups);
  console.log(
    `cold path (import + one-time waits at ${ONE_TIME_WAIT_MS} ms each, both sides): ${coldPath.groups
      .map((entry) => `${entry.group} ${entry.ratio.toFixed(2)} (${entry.one_time_waits} waits)`)
      .join(', ')}`,
  );
  // Before the stand-ins too: its cold start is fresh processes of its own.
  const moderation = await moderationFigures(settings.moderation);

  const standIns = await startStandIns();
  try {
    const { runInProcess } = await import('./in-process.ts');
    const { runLoad } = await import('./load.ts');

    console.log('\nin process (handler chain vs. the bare storage work, measured alternately) ...');
    const inProcess = await runInProcess(settings);
    const paths = [
      ['GET /auth/me', inProcess.me, 'one GetItem'],
      ['POST /auth/login', inProcess.login, 'argon2 verify + one GetItem'],
      ['POST /api/v1/upload (4 MiB)', inProcess.upload, 'SHA-256 + one PutObject'],
    ] as const;
    console.log(
      table(
        ['path (wall clock, reported)', 'n', 'p50 ms', 'baseline', 'baseline p50 ms', 'ratio'],
        paths.map(([name, figures, baseline]) => [
          name,
          figures.iterations,
          ms(figures.p50_ms),
          baseline,
          ms(figures.baseline_p50_ms),
          figures.ratio.toFixed(2),
        ]),
      ),
    );
    console.log(
      `round ratios: ${paths.map(([name, figures]) => `${name} ${figures.round_ratios.join(' ')}`).join('; ')}`,
    );
    console.log(
      `upload CPU of this process per 4 MiB request: ${ms(inProcess.upload.cpu_ms)} ms (baseline SHA-256 + PutObject ${ms(inProcess.upload.baseline_cpu_ms)} ms)`,
    );
    console.log(
      `order create p50 ${ms(inProcess.order_create_p50_ms)} ms, callback settlement p50 ${ms(inProcess.callback_settlement_p50_ms)} ms`,
    );
    console.log('\nSDK calls per request:');
    console.log(
      table(
        ['request', 'DynamoDB', 'S3', 'DynamoDB operations'],
        Object.entries(inProcess.round_trips).map(([name, counts]) => [
          name,
          counts.dynamodb,
          counts.s3,
          Object.entries(counts.operations)
            .map(([operation, n]) => `${operation} x${n}`)
            .join(', '),
        ]),
      ),
    );

    console.log(
      `\ncritical-path waits and CPU of this process per request (${settings.cpuIterations} per path, logins ${Math.min(40, settings.cpuIterations)}) ...`,
    );
    const { measureAwsFigures } = await import('./aws-figures.ts');
    const { pngOf, varied, UPLOAD_BYTES } = await import('./in-process.ts');
    const bigPng = pngOf(UPLOAD_BYTES);
    let bigUploads = 1_000_000;
    const aws = await measureAwsFigures({
      iterations: settings.cpuIterations,
      loginIterations: Math.min(40, settings.cpuIterations),
      uploadBytes: () => varied(bigPng, ++bigUploads),
    });
    console.log(
      table(
        ['path', 'waits', 'floor', 'steps', 'CPU ms', 'SDK-only CPU ms', 'CPU ratio'],
        Object.entries(aws.paths).map(([name, entry]) => [
          name,
          entry.waits,
          entry.floor ?? '-',
          entry.steps,
          ms(entry.cpu_ms),
          ms(entry.baseline_cpu_ms),
          entry.cpu_ratio.toFixed(2),
        ]),
      ),
    );

    const renditions = await renditionFigures(settings, standIns.scratch);

    console.log(
      `\npartition heat: a load mix of ${settings.mixAccounts} accounts, ${settings.mixRounds} rounds, predicted at the target load ...`,
    );
    const { HeatRecorder } = await import('#test/support/partition-heat.ts');
    const { runLoadMix } = await import('#test/support/load-mix.ts');
    const { dynamoClient } = await import('#lib/platform/aws/dynamodb.ts');
    const { config } = await import('#lib/platform/config/index.ts');
    const handlers = {
      accounts: (await import('#functions/accounts/handler.ts')).handler,
      files: (await import('#functions/files/handler.ts')).handler,
      payments: (await import('#functions/payments/handler.ts')).handler,
      paymentCallback: (await import('#functions/payment-callback/handler.ts')).handler,
      shares: (await import('#functions/shares/handler.ts')).handler,
    };
    const takedowns = (await import('#functions/takedowns/handler.ts')).handler;
    const reminders = (await import('#functions/reminders/handler.ts')).handler;
    const moderationWorker = (await import('#functions/moderation/handler.ts')).handler;
    const { lambdaContext } = await import('#test/support/events.ts');
    const { testTable } = await import('#test/support/resources.ts');
    const recorder = new HeatRecorder();
    const mix = await runLoadMix({
      handlers,
      recorder,
      startRecording: () => recorder.install(dynamoClient(config.aws) as never),
      accounts: settings.mixAccounts,
      rounds: settings.mixRounds,
      staticToken: STATIC_TOKEN,
      workers: {
        takedowns: () => takedowns({}, lambdaContext as never),
        reminders: () => reminders({}, lambdaContext as never),
        moderation: (event) => moderationWorker(event, lambdaContext as never),
      },
      table: testTable(),
      listingShards: config.listing_shards,
    });
    recorder.uninstall();
    const predicted = predict(recorder.keys(), mix.requests, new Set(mix.usernames));
    const heat = heatFigures(predicted);
    console.log(
      `requests: ${Object.entries(mix.requests)
        .map(([path, n]) => `${path} ${n}`)
        .join(', ')}; target rates /s: ${Object.entries(TARGET_RATES)
        .map(([path, rate]) => `${path} ${rate}`)
        .join(', ')}`,
    );
    console.log(
      table(
        ['hottest shared partitions', 'write share', 'WCU/s at target', 'RCU/s at target', 'paths'],
        heat.top.map((entry) => [
          `${entry.space} ${entry.key}`,
          `${(entry.write_share * 100).toFixed(1)} %`,
          entry.wcu_per_s,
          entry.rcu_per_s,
          entry.paths.join(', '),
        ]),
      ),
    );

    console.log(
      `\nload: GET /auth/me over HTTP, ${settings.connections} connections, ${settings.loadSeconds} s; then raw GetItem, ${settings.connections} in flight ...`,
    );
    const load = await runLoad({ connections: settings.connections, seconds: settings.loadSeconds });
    let memory: MemoryReport | null = null;
    if (settings.memory) {
      console.log(
        '\nmemory: confirm of a presigned object of upload.presign_max_bytes, direct upload of 4 MiB ...',
      );
      memory = runMemory();
      console.log(
        `confirm of ${memory.object_mib} MiB: peak RSS +${memory.confirm_peak_rss_mib} MiB; direct upload of ${(memory.direct_upload_bytes / 1024 / 1024).toFixed(0)} MiB: +${memory.direct_upload_peak_rss_mib} MiB`,
      );
    }
    console.log(
      table(
        ['load', 'req/s', 'p50 ms', 'p99 ms', 'requests', 'errors'],
        [
          ['GET /auth/me (HTTP)', load.me_http],
          ['raw GetItem', load.raw_getitem],
        ].map(([name, figures]) => {
          const entry = figures as typeof load.me_http;
          return [
            name as string,
            entry.requests_per_s,
            entry.p50_ms,
            entry.p99_ms,
            entry.requests,
            entry.errors,
          ];
        }),
      ),
    );

    console.log("\nlog bytes per request at INFO (a process of its own, Lambda's environment in prod) ...");
    const logBytes = runLogBytes();
    console.log(
      table(
        ['path', 'bytes (max of 4, the first cold)', 'lines'],
        Object.entries(logBytes.per_path).map(([name, entry]) => [name, entry.bytes_max, entry.lines_max]),
      ),
    );
    const worst = worstHourFigures();
    console.log(
      `worst hour of one anonymous address: $${worst.worst_hour_usd_max} on the routes a count bounds; a 100 MiB original $${worst.worst_hour_usd_large_original}, bounded by its owner's bandwidth (docs/CAPACITY.md)`,
    );

    const summary = [
      ['hot_key_wcu_at_target', heat.hot_key_wcu_at_target, GOALS.hot_key_wcu_at_target],
      ['hot_key_rcu_at_target', heat.hot_key_rcu_at_target, GOALS.hot_key_rcu_at_target],
      ['hot_key_wcu_at_10x', heat.hot_key_wcu_at_10x, GOALS.hot_key_wcu_at_10x],
      ['hot_key_rcu_at_10x', heat.hot_key_rcu_at_10x, GOALS.hot_key_rcu_at_10x],
      ['waits_over_floor', aws.waits_over_floor, GOALS.waits_over_floor],
      ['cpu_ratio_max', aws.cpu_ratio_max, GOALS.cpu_ratio_max],
      ['cold_path_ratio_max', coldPath.cold_path_ratio_max, GOALS.cold_path_ratio_max],
      ['bundle_kb_max', coldImport.bundle_kb_max, GOALS.bundle_kb_max],
      ...(memory
        ? ([['confirm_peak_rss_mib', memory.confirm_peak_rss_mib, GOALS.confirm_peak_rss_mib]] as const)
        : []),
      ...renditionGoals(renditions),
      ['worst_hour_usd_max', worst.worst_hour_usd_max, GOALS.worst_hour_usd_max],
      ['log_bytes_per_request_max', logBytes.log_bytes_per_request_max, GOALS.log_bytes_per_request_max],
    ] as const;
    printGoals(summary);
    const seconds = (performance.now() - started) / 1000;
    console.log(`\n(${seconds.toFixed(0)} s in all)`);

    const round_trips = Object.fromEntries(
      Object.entries(inProcess.round_trips).map(([name, counts]) => [name, counts.dynamodb]),
    );
    const bench = {
      hot_key_wcu_at_target: heat.hot_key_wcu_at_target,
      hot_key_rcu_at_target: heat.hot_key_rcu_at_target,
      hot_key_wcu_at_10x: heat.hot_key_wcu_at_10x,
      hot_key_rcu_at_10x: heat.hot_key_rcu_at_10x,
      waits_over_floor: aws.waits_over_floor,
      cpu_ratio_max: aws.cpu_ratio_max,
      cold_path_ratio_max: coldPath.cold_path_ratio_max,
      me_overhead_ratio: inProcess.me.ratio,
      login_overhead_ratio: inProcess.login.ratio,
      upload_overhead_ratio: inProcess.upload.ratio,
      cold_import_ratio_max: coldImport.cold_import_ratio_max,
      bundle_kb_max: coldImport.bundle_kb_max,
      confirm_peak_rss_mib: memory?.confirm_peak_rss_mib ?? null,
      upload_cpu_ms: inProcess.upload.cpu_ms,
      direct_upload_peak_rss_mib: memory?.direct_upload_peak_rss_mib ?? null,
      powertools_import_p50_ms: coldImport.powertools?.import_p50_ms ?? null,
      ...renditionJson(renditions),
      ...moderationJson(moderation),
      ...worst,
      log_bytes_per_request_max: logBytes.log_bytes_per_request_max,
      log_lines_per_request_max: logBytes.log_lines_per_request_max,
      round_trips,
      paths: {
        me: inProcess.me,
        login: inProcess.login,
        upload: inProcess.upload,
        order_create_p50_ms: inProcess.order_create_p50_ms,
        callback_settlement_p50_ms: inProcess.callback_settlement_p50_ms,
      },
      calls: inProcess.round_trips,
      waits: Object.fromEntries(Object.entries(aws.paths).map(([name, entry]) => [name, entry.waits])),
      aws_paths: aws.paths,
      heat: {
        hottest_write_key: heat.hottest_write_key,
        hottest_read_key: heat.hottest_read_key,
        requests: mix.requests,
        target_rates: TARGET_RATES,
        top: heat.top,
      },
      cold_import: coldImport,
      cold_path: coldPath.groups,
      memory,
      renditions,
      moderation,
      load,
      machine,
      seconds: Math.round(seconds),
    };
    console.log(`BENCH ${JSON.stringify(bench)}`);
    checkGoals(summary);
  } finally {
    await standIns.stop();
  }
}

main().then(
  // Lazily built SDK clients keep sockets open; nothing else is left to finish.
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
