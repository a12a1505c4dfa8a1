// The capacity model (docs/CAPACITY.md): the target rate of each path, its duration on AWS, and what the prod
// stage derives from them: reserved concurrency per function, the API stage's throttle, the Lambda quota.
import type { FunctionGroup } from '#lib/http/routes.ts';

/** docs/DESIGN.md 19: the load the prod stage is shaped for. */
export const TARGET = {
  accounts: 10_000_000,
  loginsPerSecond: 1_000,
  uploadsPerSecond: 500,
  callbacksPerSecond: 100,
  /** One image everyone is looking at, at the largest direct upload (upload.max_bytes, 4 MiB). */
  viralImageViewsPerSecond: 50_000,
  viralImageBytes: 4 * 1024 * 1024,
} as const;

/**
 * Capacity above the target that every derived figure keeps: bursts above the mean rate, cold starts while
 * a function scales out, and the time it takes an operator to see an alarm and raise a setting.
 */
export const HEADROOM = 1.5;

/** Lambda keeps at least 100 of an account's concurrency unreserved; the default quota is 1000. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;
/**
 * What a new AWS account may start with before its first increase (Service Quotas shows 10 on some): the
 * small-site stage's throttles keep the concurrency they can cause within it (docs/DEPLOYMENT.md).
 */
export const NEW_ACCOUNT_CONCURRENCY = 10;

/**
 * The Lambda concurrency an API throttle causes when it is held full with the target's mix of API paths,
 * each at its p99: the rate times the mix's mean p99.
 */
export function concurrencyAtThrottle(rateLimit: number, paths: readonly PathLoad[] = PATHS): number {
  const api = paths.filter((path) => !path.functionUrl);
  const meanP99Ms = api.reduce((sum, path) => sum + path.perSecond * path.p99Ms, 0) / apiPerSecond(api);
  return (rateLimit * meanP99Ms) / 1000;
}

/**
 * Memory per function in prod. auth at 1,769 MB has one full vCPU, so argon2id runs at full speed; so
 * does render, whose class (infra/service-function.ts `image-rendering`) already is one full vCPU.
 */
export const PROD_MEMORY_MB: Record<FunctionGroup, number> = {
  accounts: 1769,
  shares: 1024,
  files: 512,
  meta: 256,
  render: 1769,
  payments: 512,
  'payment-callback': 512,
};

/** A share of one vCPU: Lambda gives CPU in proportion to memory, one full vCPU at 1,769 MB. */
export const vcpuOf = (memoryMb: number): number => Math.min(memoryMb / 1769, 1);

/** One request path at its target rate, with its duration on AWS at its function's prod memory. */
export interface PathLoad {
  name: string;
  group: FunctionGroup;
  perSecond: number;
  /** The target itself, or what this document assumes beside it (docs/CAPACITY.md says why). */
  rate: 'target' | 'assumed';
  p50Ms: number;
  p99Ms: number;
  /** How the duration is made up (DynamoDB waits, CPU at the function's vCPU share, S3, mail, a channel). */
  duration: string;
  /** DynamoDB read and write request units per request (docs/PERFORMANCE.md "Cost per API call"). */
  rru: number;
  wru: number;
  /** Mails sent per request (SES). */
  mails?: number;
  /** Channels notify the callback function's own URL (docs/DESIGN.md 1): not through API Gateway or the CDN. */
  functionUrl?: true;
}

/**
 * Renders measured with the service's sharp (docs/CAPACITY.md "The render function"), each in a fresh
 * process on one core: a 50-megapixel JPEG (8660 x 5774 of noise) to a 480-wide WebP in about 300 ms, and
 * the worst peak of any render measured (the same source to a 3,840-wide AVIF, through the renderer).
 */
export const RENDER_MEASURED = { thumbnailMs: 300, thumbnailPeakRssMiB: 97, worstPeakRssMiB: 467 } as const;

/**
 * First renders per upload: every new file's thumbnail in its owner's grid, 480 wide and 960 for
 * high-density screens. The CDN serves every later view, and other sizes are rarer.
 */
export const FIRST_RENDERS_PER_UPLOAD = 2;

// The durations below count a DynamoDB call in the function's region ("several milliseconds",
// docs/PERFORMANCE.md) as 5 ms at p50 and 20 ms at p99, and calls sent together as one wait.
// CPU per 4 MiB upload at one full core (docs/PERFORMANCE.md `upload_cpu_ms`), at upload's 512 MB share.
const UPLOAD_CPU_MS = Math.round(51 / vcpuOf(PROD_MEMORY_MB.files));

export const PATHS: readonly PathLoad[] = [
  {
    name: 'POST /auth/login',
    group: 'accounts',
    perSecond: TARGET.loginsPerSecond,
    rate: 'target',
    p50Ms: 25,
    p99Ms: 70,
    duration:
      'two waits (limits, then the session) around argon2id at one full vCPU (11-12 ms) beside the account read',
    rru: 2,
    wru: 5,
  },
  {
    name: 'GET /auth/me',
    group: 'accounts',
    perSecond: 1_000,
    rate: 'assumed',
    p50Ms: 7,
    p99Ms: 25,
    duration: 'one BatchGetItem (session, account)',
    rru: 2,
    wru: 0,
  },
  {
    name: 'POST /auth/register (+ its code)',
    group: 'accounts',
    perSecond: 20,
    rate: 'assumed',
    p50Ms: 100,
    p99Ms: 300,
    duration:
      'the code request (throttles, SES SendEmail 40-150 ms) and the registration (argon2id hash, one transaction)',
    rru: 4,
    wru: 8,
    mails: 1,
  },
  {
    name: 'POST /api/v1/upload (4 MiB)',
    group: 'files',
    perSecond: TARGET.uploadsPerSecond,
    rate: 'target',
    p50Ms: 250,
    p99Ms: 550,
    duration: `${UPLOAD_CPU_MS} ms of CPU at 512 MB (51 ms at one vCPU), two waits, one 4 MiB PutObject (60-250 ms)`,
    rru: 4,
    // The record, its hash claim, the usage and the upload rate's minute and day (2 each in a transaction).
    wru: 12,
  },
  {
    name: 'POST /api/v1/upload/presign',
    group: 'files',
    perSecond: 20,
    rate: 'assumed',
    p50Ms: 15,
    p99Ms: 50,
    duration: 'the uploader and usage reads, the pending item, a local signature',
    rru: 3,
    // The quota hold, the pending item and the upload rate's minute and day, in one transaction.
    wru: 8,
  },
  {
    name: 'POST /api/v1/upload/confirm',
    group: 'files',
    perSecond: 20,
    rate: 'assumed',
    p50Ms: 900,
    p99Ms: 6_000,
    duration:
      'p50 a 16 MiB object, p99 a 100 MiB one: read, checked, stripped, hashed at 512 MB, written back',
    rru: 5,
    wru: 10,
  },
  {
    name: 'GET /api/v1/files, /gallery',
    group: 'files',
    perSecond: 200,
    rate: 'assumed',
    p50Ms: 15,
    p99Ms: 60,
    duration: 'the uploader read, then one Query per shard, all at once (one wait)',
    rru: 18,
    wru: 0,
  },
  {
    name: 'DELETE /api/v1/files/{id}',
    group: 'files',
    perSecond: 50,
    rate: 'assumed',
    p50Ms: 25,
    p99Ms: 80,
    duration: 'record read, one transaction (record, hash claim, usage), DeleteObject',
    rru: 3,
    wru: 8,
  },
  {
    name: '/healthz, /docs, unmatched paths',
    group: 'meta',
    perSecond: 10,
    rate: 'assumed',
    p50Ms: 5,
    p99Ms: 30,
    duration: 'no AWS call, or one',
    rru: 0,
    wru: 0,
  },
  {
    name: 'GET /i/{key}?w= (first render)',
    group: 'render',
    perSecond: TARGET.uploadsPerSecond * FIRST_RENDERS_PER_UPLOAD,
    rate: 'assumed',
    p50Ms: 300,
    p99Ms: 1_200,
    duration:
      'the stored copy (a miss), then the claim (one PutItem) beside the original (4 MiB: 60-250 ms), one render at one vCPU in its render process (100-220 ms for a 12 MP photo, 300 ms for 50 MP), the copy stored',
    rru: 0,
    wru: 1,
  },
  {
    name: 'GET /i/{key}?w= (stored rendition)',
    group: 'render',
    perSecond: (TARGET.uploadsPerSecond * FIRST_RENDERS_PER_UPLOAD) / 2,
    rate: 'assumed',
    p50Ms: 20,
    p99Ms: 80,
    duration: "another regional edge cache's miss: one GET of the stored copy",
    rru: 0,
    wru: 0,
  },
  {
    name: 'POST /api/v1/orders (channel)',
    group: 'payments',
    perSecond: TARGET.callbacksPerSecond,
    rate: 'target',
    p50Ms: 230,
    p99Ms: 1_600,
    duration:
      "the caller read, the channel's own API (5 s timeout), then the order item (plan and settings from the container's cache)",
    rru: 2,
    wru: 6,
  },
  {
    name: 'GET /api/v1/orders/{id}, /plans',
    group: 'payments',
    perSecond: 200,
    rate: 'assumed',
    p50Ms: 10,
    p99Ms: 40,
    duration: 'one or two reads',
    rru: 2,
    wru: 0,
  },
  {
    name: 'channel callback (settles an order)',
    group: 'payment-callback',
    perSecond: TARGET.callbacksPerSecond,
    rate: 'target',
    p50Ms: 25,
    p99Ms: 100,
    duration: 'signature check, the order read, one transaction (order, outbox, grant)',
    rru: 2,
    wru: 10,
    functionUrl: true,
  },
];

export const groupsOf = (): FunctionGroup[] => Object.keys(PROD_MEMORY_MB) as FunctionGroup[];

export const roundUp = (value: number, step: number): number => Math.ceil(value / step) * step;

/** Little's law: executions in flight = arrivals per second x seconds each, at p99 to cover the tail. */
export const concurrencyOf = (path: PathLoad): number => (path.perSecond * path.p99Ms) / 1000;

/** A reservation smaller than this leaves a quiet function no room for a burst of cold starts. */
export const MIN_RESERVED = 10;

export interface GroupCapacity {
  group: FunctionGroup;
  perSecond: number;
  concurrency: number;
  memoryMb: number;
  reserved: number;
}

/** Per function: the target rate, the concurrency it needs, and its reservation (with headroom, by tens). */
export function groupCapacity(paths: readonly PathLoad[] = PATHS): GroupCapacity[] {
  return groupsOf().map((group) => {
    const own = paths.filter((path) => path.group === group);
    const concurrency = own.reduce((sum, path) => sum + concurrencyOf(path), 0);
    return {
      group,
      perSecond: own.reduce((sum, path) => sum + path.perSecond, 0),
      concurrency,
      memoryMb: PROD_MEMORY_MB[group],
      reserved: Math.max(MIN_RESERVED, roundUp(concurrency * HEADROOM, 10)),
    };
  });
}

export function prodReservedConcurrency(paths: readonly PathLoad[] = PATHS): Record<FunctionGroup, number> {
  const reserved = groupCapacity(paths).map((row) => [row.group, row.reserved]);
  return Object.fromEntries(reserved) as Record<FunctionGroup, number>;
}

/**
 * API Gateway's default account throttle in most regions, and its burst bucket: a stage burst above the
 * bucket is never reached.
 */
export const API_GATEWAY_ACCOUNT_RPS = 10_000;
export const API_GATEWAY_ACCOUNT_BURST = 5_000;

/** DynamoDB request units per second at the target, reads and writes. */
export function dynamoUnitsPerSecond(paths: readonly PathLoad[] = PATHS): { rru: number; wru: number } {
  return {
    rru: paths.reduce((sum, path) => sum + path.perSecond * path.rru, 0),
    wru: paths.reduce((sum, path) => sum + path.perSecond * path.wru, 0),
  };
}

/** Requests per second that reach API Gateway at the target (the callbacks come through the function URL). */
export const apiPerSecond = (paths: readonly PathLoad[] = PATHS): number =>
  paths.filter((path) => !path.functionUrl).reduce((sum, path) => sum + path.perSecond, 0);

/** The API stage's throttle: every API path's target rate with headroom, by 500; burst one second of it. */
export function prodThrottle(paths: readonly PathLoad[] = PATHS): { rateLimit: number; burstLimit: number } {
  const perSecond = apiPerSecond(paths);
  const rateLimit = roundUp(perSecond * HEADROOM, 500);
  return { rateLimit, burstLimit: Math.min(rateLimit, API_GATEWAY_ACCOUNT_BURST) };
}

/**
 * The render route's own throttle (infra/api.ts): render's target rate with headroom, by 500, burst one
 * second of it, so renders never take the rest of the API's share of the stage throttle.
 */
export function prodRenderThrottle(paths: readonly PathLoad[] = PATHS): {
  rateLimit: number;
  burstLimit: number;
} {
  const perSecond = paths
    .filter((path) => path.group === 'render')
    .reduce((sum, path) => sum + path.perSecond, 0);
  const rateLimit = roundUp(perSecond * HEADROOM, 500);
  return { rateLimit, burstLimit: Math.min(rateLimit, API_GATEWAY_ACCOUNT_BURST) };
}

/** The window WAF counts an address's requests over, in seconds (its default). */
export const WAF_WINDOW_SECONDS = 300;

/**
 * Requests one address may make per WAF_WINDOW_SECONDS before the web ACL blocks it (infra/waf.ts): every
 * request; renders (an /i/ request naming a rendition); originals (any other /i/ request); code requests
 * (each may send a mail). docs/CAPACITY.md "The worst hour" prices an address held at each: within
 * $0.10 an hour, and a person browsing (a gallery page of thumbnails, a few originals) stays under them.
 */
export const PER_ADDRESS_LIMITS = { all: 1000, renders: 300, originals: 20, codes: 10 } as const;

/** The prod stage file's capacity settings, as infra/config/prod.json must carry them. */
export function prodCapacitySettings(paths: readonly PathLoad[] = PATHS) {
  const { rateLimit, burstLimit } = prodThrottle(paths);
  const render = prodRenderThrottle(paths);
  return {
    throttle: { rate_limit: rateLimit, burst_limit: burstLimit },
    render_throttle: { rate_limit: render.rateLimit, burst_limit: render.burstLimit },
    reserved_concurrency: prodReservedConcurrency(paths),
    lambda_concurrency_quota: lambdaQuotaToRequest(paths),
    // Only what differs from the function's class (infra/service-function.ts MEMORY_MB): dev stays small.
    memory_mb: { accounts: PROD_MEMORY_MB.accounts },
  };
}

/**
 * The account's Lambda concurrency to ask for: the reservations plus Lambda's unreserved minimum (the
 * workers run there), doubled so that each reservation can be raised to twice the target without another
 * request, by thousands.
 */
export function lambdaQuotaToRequest(paths: readonly PathLoad[] = PATHS): number {
  const reserved = groupCapacity(paths).reduce((sum, row) => sum + row.reserved, 0);
  return roundUp((reserved + LAMBDA_UNRESERVED_MINIMUM) * 2, 1000);
}
