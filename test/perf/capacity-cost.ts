// What each main path costs per million at AWS list prices (docs/CAPACITY.md "Cost per million requests"):
// arm64 Lambda at its prod memory and p50 duration, the HTTP API, CloudFront with its egress, DynamoDB, S3.
import { PATHS, PROD_MEMORY_MB, TARGET } from '#infra/capacity.ts';

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
  /** Data transfer out to viewers, the first 10 TB a month; later tiers cost less. */
  cloudfrontEgressPerGb: 0.085,
  /** Data transfer from the edge to the origin (request bodies: uploads through the CDN). */
  cloudfrontToOriginPerGb: 0.02,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  s3PerPut: 0.005 / 1000,
  s3PerGet: 0.0004 / 1000,
  eventBridgePerEvent: 1.0 / 1e6,
} as const;

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
  { ...none, name: 'image view (4 MiB, CDN)', cdnRequests: 1, bytesToViewers: TARGET.viralImageBytes },
  {
    ...none,
    name: 'rendition first render (40 KiB WebP)',
    // Through the CDN and API Gateway to the render function: the stored copy looked for (a miss), the
    // claim taken (one PutItem) beside the original's read, the rendition stored beside a HEAD of the
    // original (billed as a GET), answered.
    ...apiCall(),
    ...paths('GET /i/{key}?w= (first render)'),
    bytesToViewers: 40 * KIB,
    s3Gets: 3,
    s3Puts: 1,
  },
  { ...none, name: 'rendition view (40 KiB WebP, CDN)', cdnRequests: 1, bytesToViewers: 40 * KIB },
];

export interface CallCost {
  name: string;
  lambda: number;
  api: number;
  cdn: number;
  dynamodb: number;
  s3: number;
  events: number;
  total: number;
}

const cents = (dollars: number): number => Math.round(dollars * 100) / 100;

/** Dollars per million calls, by service, rounded to the cent. */
export function costPerMillion(call: CallShape): CallCost {
  const million = 1e6;
  const lambda =
    call.invocations.reduce(
      (sum, { memoryMb, ms }) =>
        sum + (memoryMb / 1024) * (ms / 1000) * PRICES.lambdaArmPerGbSecond + PRICES.lambdaPerRequest,
      0,
    ) * million;
  const api =
    call.apiRequests.reduce(
      (sum, bytes) => sum + Math.ceil(bytes / HTTP_API_UNIT_BYTES) * PRICES.httpApiPerRequest,
      0,
    ) * million;
  const toOrigin = call.apiRequests.reduce((sum, bytes) => sum + bytes, 0);
  const cdn =
    (call.cdnRequests * PRICES.cloudfrontPerHttpsRequest +
      (call.bytesToViewers / GB) * PRICES.cloudfrontEgressPerGb +
      (toOrigin / GB) * PRICES.cloudfrontToOriginPerGb) *
    million;
  const dynamodb = (call.rru * PRICES.dynamoPerRru + call.wru * PRICES.dynamoPerWru) * million;
  const s3 = (call.s3Puts * PRICES.s3PerPut + call.s3Gets * PRICES.s3PerGet) * million;
  const events = call.events * PRICES.eventBridgePerEvent * million;
  return {
    name: call.name,
    lambda: cents(lambda),
    api: cents(api),
    cdn: cents(cdn),
    dynamodb: cents(dynamodb),
    s3: cents(s3),
    events: cents(events),
    total: cents(lambda + api + cdn + dynamodb + s3 + events),
  };
}
