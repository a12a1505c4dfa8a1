// What each main path costs per million at AWS list prices (docs/CAPACITY.md "Cost per million requests"):
// arm64 Lambda at its prod memory and p50 duration, the HTTP API, CloudFront with its egress and its WAF,
// DynamoDB, S3, the request's log line, its sampled trace and its CDN log line kept a year; what logs, traces,
// CDN logs and the WAF cost in a month at the target; what one anonymous address held at the WAF's limits
// can cost in an hour ("The worst hour"); and the cost alarms prod derives from its budget.
import { PATHS, PER_ADDRESS_LIMITS, PROD_MEMORY_MB, TARGET, WAF_WINDOW_SECONDS } from '#infra/capacity.ts';
import { MAX_REQUEST_LINE_BYTES } from '#lib/platform/log.ts';

/**
 * us-east-1 list prices, on-demand, as of November 2025 (DynamoDB's on-demand prices are those of its
 * 1 November 2024 cut). CloudFront's are the United States and Europe rates of the first tier.
 */
export const PRICES = {
  region: 'us-east-1',
  asOf: '2025-11',
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerRequest: 0.2 / 1e6,
  /** HTTP API (the stack's `HttpApi`, infra/api.ts): the first 300 million a month, metered per 512 KB. */
  httpApiPerRequest: 1.0 / 1e6,
  cloudfrontPerHttpsRequest: 0.01 / 10_000,
  /** A viewer-request function runs on every request through the CDN (infra/edge.ts). */
  cloudfrontFunctionPerInvocation: 0.1 / 1e6,
  /** A KeyValueStore read by a function: the /i/* function reads the deny-list and the owner's rules. */
  kvsPerRead: 0.03 / 1e6,
  /** Data transfer out to viewers, the first 10 TB a month; later tiers cost less. */
  cloudfrontEgressPerGb: 0.085,
  /** Data transfer from the edge to the origin (request bodies: uploads through the CDN). */
  cloudfrontToOriginPerGb: 0.02,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  s3PerPut: 0.005 / 1000,
  s3PerGet: 0.0004 / 1000,
  s3PerGbMonth: 0.023,
  eventBridgePerEvent: 1.0 / 1e6,
  /** WAF on the distribution: every request it inspects, and each web ACL and rule a month. */
  wafPerRequest: 0.6 / 1e6,
  wafPerAclMonth: 5,
  wafPerRuleMonth: 1,
  /**
   * CloudWatch Logs ingestion of Lambda's logs (vended logs): $0.50 per GB for the first 10 TB a month,
   * $0.25 the next 20 TB, $0.10 the next 20 TB, $0.05 beyond (LOG_TIERS).
   */
  logsPerGb: 0.5,
  /** X-Ray: traces recorded (the first 100,000 a month free, not counted here). */
  xrayPerTrace: 5.0 / 1e6,
  /** SES: mails sent. */
  sesPerMail: 0.1 / 1000,
} as const;

/** The vended-log tiers: [GB in the tier, price per GB], the last unbounded. */
export const LOG_TIERS: ReadonlyArray<readonly [number, number]> = [
  [10 * 1024, 0.5],
  [20 * 1024, 0.25],
  [20 * 1024, 0.1],
  [Number.POSITIVE_INFINITY, 0.05],
];

/**
 * What prod writes besides the work: each invocation at most one log line (lib/platform/log.ts, docs/DESIGN.md
 * 23; priced at its cap); before this cap a request cost about 1,700 bytes (its access line, its EMF document,
 * Lambda's START, END and REPORT lines, API Gateway's access line). X-Ray records XRAY_SAMPLED of them (the
 * stage's `infra.xray_sampling_percent`). CloudFront writes one standard log line per request (about 500
 * bytes, delivered gzip at about a tenth of that) into the log bucket, kept `infra.log_retention_days` (365
 * in prod).
 */
export const LOG_BYTES_PER_INVOCATION = MAX_REQUEST_LINE_BYTES;
export const LOG_BYTES_PER_REQUEST_BEFORE = 1_700;
export const XRAY_SAMPLED = 0.05;
export const CDN_LOG_BYTES_STORED = 50;
export const CDN_LOG_MONTHS = 12;
export const SECONDS_PER_MONTH = 730 * 3600;

/** AWS bills a GB of transfer as 2^30 bytes. */
export const GB = 1024 ** 3;
const KIB = 1024;
const MIB = 1024 * KIB;
/** An HTTP API request is billed once per started 512 KB of its size. */
const HTTP_API_UNIT_BYTES = 512 * KIB;
/** A JSON request or answer: headers and a small body. */
const SMALL = 1 * KIB;

interface Invocation {
  memoryMb: number;
  ms: number;
}

/** Modelled paths as one call: an invocation of each at its function's prod memory and p50, and their units. */
function paths(...names: string[]): Pick<CallShape, 'invocations' | 'rru' | 'wru'> {
  const found = names.map((name) => {
    const path = PATHS.find((candidate) => candidate.name === name);
    if (!path) throw new Error(`No path ${name} in infra/capacity.ts PATHS`);
    return path;
  });
  return {
    invocations: found.map((path) => ({ memoryMb: PROD_MEMORY_MB[path.group], ms: path.p50Ms })),
    rru: found.reduce((sum, path) => sum + path.rru, 0),
    wru: found.reduce((sum, path) => sum + path.wru, 0),
  };
}

export interface CallShape {
  name: string;
  invocations: Invocation[];
  /** Size of each request that passes API Gateway (and the CDN in front of it). */
  apiRequests: number[];
  cdnRequests: number;
  /** KeyValueStore reads at the edge: two for an /i/ request (the deny-list, the owner's rules). */
  edgeReads?: number;
  bytesToViewers: number;
  rru: number;
  wru: number;
  s3Puts: number;
  s3Gets: number;
  events: number;
}

const apiCall = (requestBytes = SMALL) => ({
  apiRequests: [requestBytes],
  cdnRequests: 1,
  bytesToViewers: SMALL,
});

/** A call that pays for nothing until its entry says what. */
const none = {
  invocations: [],
  apiRequests: [],
  cdnRequests: 0,
  bytesToViewers: 0,
  rru: 0,
  wru: 0,
  s3Puts: 0,
  s3Gets: 0,
  events: 0,
};

/** The main calls: the modelled paths' units and durations (infra/capacity.ts), and what else each pays. */
export const CALLS: readonly CallShape[] = [
  { ...none, name: 'login', ...apiCall(), ...paths('POST /auth/login') },
  { ...none, name: 'me', ...apiCall(), ...paths('GET /auth/me') },
  {
    ...none,
    name: 'direct upload (4 MiB)',
    ...apiCall(4 * MIB + SMALL),
    ...paths('POST /api/v1/upload (4 MiB)'),
    s3Puts: 1,
  },
  {
    ...none,
    name: 'presign + confirm (16 MiB)',
    // The bytes go from the browser straight to S3 (free inbound); only the two JSON calls pass the CDN.
    ...paths('POST /api/v1/upload/presign', 'POST /api/v1/upload/confirm'),
    apiRequests: [SMALL, SMALL],
    cdnRequests: 2,
    bytesToViewers: 2 * SMALL,
    s3Puts: 2,
    s3Gets: 1,
  },
  { ...none, name: 'order (channel)', ...apiCall(), ...paths('POST /api/v1/orders (channel)') },
  {
    ...none,
    name: 'callback (settles, + drain)',
    // Through the function URL (no API Gateway, no CDN); the drain's run and its outbox update included.
    ...paths('channel callback (settles an order)'),
    invocations: [...paths('channel callback (settles an order)').invocations, { memoryMb: 256, ms: 30 }],
    events: 1,
  },
  { ...none, name: 'delete', ...apiCall(), ...paths('DELETE /api/v1/files/{id}') },
  // Served by the edge; the origin (S3) sees a miss per regional cache per edge lifetime, not per view.
  {
    ...none,
    name: 'image view (4 MiB, CDN)',
    cdnRequests: 1,
    edgeReads: 2,
    bytesToViewers: TARGET.viralImageBytes,
  },
  {
    ...none,
    name: 'rendition first render (40 KiB WebP)',
    // Through the CDN and API Gateway to the render function: the stored copy looked for (a miss), the
    // claim taken (one PutItem) beside the original's read, the rendition stored beside a HEAD of the
    // original (billed as a GET), answered.
    ...apiCall(),
    ...paths('GET /i/{key}?w= (first render)'),
    edgeReads: 2,
    bytesToViewers: 40 * KIB,
    s3Gets: 3,
    s3Puts: 1,
  },
  {
    ...none,
    name: 'rendition view (40 KiB WebP, CDN)',
    cdnRequests: 1,
    edgeReads: 2,
    bytesToViewers: 40 * KIB,
  },
];

export interface CallCost {
  name: string;
  lambda: number;
  api: number;
  cdn: number;
  waf: number;
  dynamodb: number;
  s3: number;
  events: number;
  logs: number;
  xray: number;
  cdnLogs: number;
  total: number;
}

const cents = (dollars: number): number => Math.round(dollars * 100) / 100;

/** Dollars per million calls, by service, rounded to the cent. */
export function costPerMillion(call: CallShape): CallCost {
  const { name, total, ...parts } = costPerCall(call);
  const million = (dollars: number) => cents(dollars * 1e6);
  return {
    name,
    ...(Object.fromEntries(Object.entries(parts).map(([key, value]) => [key, million(value)])) as Omit<
      CallCost,
      'name' | 'total'
    >),
    total: million(total),
  };
}

/** Dollars per call, by service, unrounded. */
export function costPerCall(call: CallShape): CallCost {
  const lambda = call.invocations.reduce(
    (sum, { memoryMb, ms }) =>
      sum + (memoryMb / 1024) * (ms / 1000) * PRICES.lambdaArmPerGbSecond + PRICES.lambdaPerRequest,
    0,
  );
  const api = call.apiRequests.reduce(
    (sum, bytes) => sum + Math.ceil(bytes / HTTP_API_UNIT_BYTES) * PRICES.httpApiPerRequest,
    0,
  );
  const toOrigin = call.apiRequests.reduce((sum, bytes) => sum + bytes, 0);
  const cdn =
    call.cdnRequests * (PRICES.cloudfrontPerHttpsRequest + PRICES.cloudfrontFunctionPerInvocation) +
    (call.edgeReads ?? 0) * PRICES.kvsPerRead +
    (call.bytesToViewers / GB) * PRICES.cloudfrontEgressPerGb +
    (toOrigin / GB) * PRICES.cloudfrontToOriginPerGb;
  const dynamodb = call.rru * PRICES.dynamoPerRru + call.wru * PRICES.dynamoPerWru;
  const s3 = call.s3Puts * PRICES.s3PerPut + call.s3Gets * PRICES.s3PerGet;
  const events = call.events * PRICES.eventBridgePerEvent;
  const waf = call.cdnRequests * PRICES.wafPerRequest;
  const lines = call.invocations.length;
  const logs = ((lines * LOG_BYTES_PER_INVOCATION) / GB) * PRICES.logsPerGb;
  const xray = lines * XRAY_SAMPLED * PRICES.xrayPerTrace;
  const cdnLogs = cdnLogCost(call.cdnRequests);
  return {
    name: call.name,
    lambda,
    api,
    cdn,
    waf,
    dynamodb,
    s3,
    events,
    logs,
    xray,
    cdnLogs,
    total: lambda + api + cdn + waf + dynamodb + s3 + events + logs + xray + cdnLogs,
  };
}

/** A CDN log line of each request, stored for as long as the log bucket keeps it. */
const cdnLogCost = (requests: number): number =>
  ((requests * CDN_LOG_BYTES_STORED) / GB) * PRICES.s3PerGbMonth * CDN_LOG_MONTHS;

/** Dollars for this many GB of logs in one month, tier by tier. */
export function logsMonthly(gb: number): number {
  let left = gb;
  let dollars = 0;
  for (const [size, price] of LOG_TIERS) {
    const inTier = Math.min(left, size);
    dollars += inTier * price;
    left -= inTier;
  }
  return dollars;
}

/** Requests a second at the target: invocations of the functions (the drain beside each callback), the CDN's. */
export function targetRates(): { invocations: number; cdnRequests: number } {
  const invocations = PATHS.reduce((sum, path) => sum + path.perSecond, 0) + TARGET.callbacksPerSecond;
  const api = PATHS.filter((path) => !path.functionUrl).reduce((sum, path) => sum + path.perSecond, 0);
  return { invocations, cdnRequests: api + TARGET.viralImageViewsPerSecond };
}

export interface MonthlyItem {
  name: string;
  basis: string;
  dollars: number;
}

/** What logs, traces, CDN logs and the WAF cost in a month at the target (docs/CAPACITY.md). */
export function monthlyAtTarget(): MonthlyItem[] {
  const { invocations, cdnRequests } = targetRates();
  const perMonth = (perSecond: number) => perSecond * SECONDS_PER_MONTH;
  const gb = (bytes: number) => bytes / GB;
  const rules = Object.keys(PER_ADDRESS_LIMITS).length;
  return [
    {
      name: 'CloudWatch Logs',
      basis: `${LOG_BYTES_PER_INVOCATION} bytes an invocation`,
      dollars: logsMonthly(gb(perMonth(invocations) * LOG_BYTES_PER_INVOCATION)),
    },
    {
      name: 'CloudWatch Logs, before the one-line cap',
      basis: `${LOG_BYTES_PER_REQUEST_BEFORE.toLocaleString('en-US')} bytes an invocation`,
      dollars: logsMonthly(gb(perMonth(invocations) * LOG_BYTES_PER_REQUEST_BEFORE)),
    },
    {
      name: 'X-Ray',
      basis: `${XRAY_SAMPLED * 100} % of invocations traced, and one a second`,
      dollars: (perMonth(invocations) * XRAY_SAMPLED + perMonth(1)) * PRICES.xrayPerTrace,
    },
    {
      name: 'CDN standard logs',
      basis: `${CDN_LOG_MONTHS} months of logs kept, ${CDN_LOG_BYTES_STORED} bytes a request`,
      dollars: cdnLogCost(perMonth(cdnRequests)),
    },
    {
      name: 'WAF',
      basis: `every CDN request inspected; the web ACL and its ${rules} rules`,
      dollars:
        perMonth(cdnRequests) * PRICES.wafPerRequest + PRICES.wafPerAclMonth + rules * PRICES.wafPerRuleMonth,
    },
  ];
}

/** What one anonymous address held at the WAF's limits may cost the operator in an hour, at most. */
export const WORST_HOUR_GOAL_USD = 0.1;
/** docs/DESIGN.md 23: a rendition not requested for this long expires (`images.derived_ttl_days`). */
export const DERIVED_TTL_DAYS = 30;
const DAYS_PER_MONTH = 730 / 24;

/** An anonymous request, the WAF rule that counts it (infra/waf.ts), and what it leaves besides the call. */
export interface AnonymousRoute {
  name: string;
  call: CallShape;
  limit: keyof typeof PER_ADDRESS_LIMITS;
  mails?: number;
  /** Bytes it stores, kept DERIVED_TTL_DAYS (a rendition). */
  storedBytes?: number;
  /** Not bounded by a count of requests (WAF counts requests, not bytes): docs/CAPACITY.md says what is. */
  unbounded?: true;
}

const call = (name: string): CallShape => {
  const found = CALLS.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`No call ${name} in CALLS`);
  return found;
};

export const ANONYMOUS_ROUTES: readonly AnonymousRoute[] = [
  {
    name: 'renders (`/i/<key>?p=`, each a first render)',
    call: call('rendition first render (40 KiB WebP)'),
    limit: 'renders',
    storedBytes: 40 * KIB,
  },
  { name: 'originals (`/i/<key>`, 4 MiB)', call: call('image view (4 MiB, CDN)'), limit: 'originals' },
  {
    name: 'originals (`/i/<key>`, 100 MiB presigned)',
    call: { ...call('image view (4 MiB, CDN)'), bytesToViewers: 100 * MIB },
    limit: 'originals',
    unbounded: true,
  },
  {
    name: 'share pages (`GET /s/{id}`)',
    // The share read, its file read, the view counted; an 8 KiB page (docs/CAPACITY.md's share row).
    call: {
      ...none,
      name: 'share page',
      ...apiCall(),
      invocations: [{ memoryMb: PROD_MEMORY_MB.shares, ms: 20 }],
      rru: 3,
      wru: 1,
      bytesToViewers: 8 * KIB,
    },
    limit: 'all',
  },
  {
    name: 'gallery pages (`GET /api/v1/gallery`)',
    call: {
      ...none,
      name: 'gallery page',
      ...apiCall(),
      ...paths('GET /api/v1/files, /gallery'),
      bytesToViewers: 16 * KIB,
    },
    limit: 'all',
  },
  {
    name: 'register and reset codes (`POST /auth/.../code`)',
    // Priced as a whole registration (argon2id and its transaction) and its mail: more than a code request.
    call: { ...none, name: 'code request', ...apiCall(), ...paths('POST /auth/register (+ its code)') },
    limit: 'codes',
    mails: 1,
  },
];

export interface WorstHourRow {
  name: string;
  limit: number;
  perHour: number;
  perRequest: number;
  dollars: number;
  unbounded: boolean;
}

/** Each anonymous route at its per-address limit for an hour (WAF counts per WAF_WINDOW_SECONDS). */
export function worstHour(
  limits: Record<keyof typeof PER_ADDRESS_LIMITS, number> = PER_ADDRESS_LIMITS,
): WorstHourRow[] {
  return ANONYMOUS_ROUTES.map((route) => {
    const limit = limits[route.limit];
    const perHour = (limit * 3600) / WAF_WINDOW_SECONDS;
    const stored =
      ((route.storedBytes ?? 0) / GB) * PRICES.s3PerGbMonth * (DERIVED_TTL_DAYS / DAYS_PER_MONTH);
    const perRequest = costPerCall(route.call).total + (route.mails ?? 0) * PRICES.sesPerMail + stored;
    return {
      name: route.name,
      limit,
      perHour,
      perRequest,
      dollars: perHour * perRequest,
      unbounded: Boolean(route.unbounded),
    };
  });
}

/**
 * Prod's cost alarms from its monthly budget (infra/cost-alarms.ts): each fires when its item alone, kept at
 * that rate for a month, would spend COST_ALARM_SHARE of the budget; the billing alarm at the budget itself.
 */
export const COST_ALARM_SHARE = 0.5;

const floorTo = (value: number, step: number): number => Math.floor(value / step) * step;

export function costAlarmThresholds(monthlyUsd: number) {
  const perHour = (monthlyUsd * COST_ALARM_SHARE) / 730;
  const render = costPerCall(call('rendition first render (40 KiB WebP)')).total;
  return {
    billing_usd: monthlyUsd,
    cdn_bytes_per_hour: floorTo((perHour / PRICES.cloudfrontEgressPerGb) * GB, GB),
    cdn_requests_per_hour: floorTo(perHour / (PRICES.cloudfrontPerHttpsRequest + PRICES.wafPerRequest), 1000),
    render_invocations_per_hour: floorTo(perHour / render, 100),
    bucket_bytes: floorTo(((monthlyUsd * COST_ALARM_SHARE) / PRICES.s3PerGbMonth) * GB, GB),
  };
}
