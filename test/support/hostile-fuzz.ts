// Shared by the hostile-*.test.ts files: fast-check arbitraries for hostile API Gateway events (bodies,
// headers, query strings, path parameters), the checks every answer must pass, and table + bucket
// snapshots to prove that rejected requests change nothing.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { expect } from 'vitest';
import { buildEvent } from '#infra/local/api-event.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { API_PREFIX, type RouteSpec, routeKeyOf } from '#lib/http/routes.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { lambdaContext } from './events.ts';
import { serviceKeyOf } from './object-keys.ts';

/** Fixed so failures reproduce; `HOSTILE_SEED=<n>` explores another part of the space. */
export const SEED = Number(process.env.HOSTILE_SEED ?? 20261121);
/** Runs per route and caller; `HOSTILE_RUNS` raises it for a longer hunt. */
export const RUNS = Number(process.env.HOSTILE_RUNS ?? 24);

export type Caller = 'none' | 'user' | 'admin';
export type GroupHandler = (event: ApiEvent, context: typeof lambdaContext) => Promise<ApiResult>;

// ---- values -------------------------------------------------------------------------------------------

const NASTY_STRINGS = [
  '',
  ' ',
  '../../../../etc/passwd',
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '..\\..\\windows\\win.ini',
  '%00',
  '\u0000',
  '\uD800',
  '\u202Egnp.exe',
  'ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ',
  '😀'.repeat(40),
  '<script>alert(1)</script>',
  "' OR '1'='1' --",
  '{"$gt":""}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell probe, meant literally
  '${jndi:ldap://127.0.0.1/x}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  '9007199254740993',
  'a@b',
  'user@example.test',
  'UPPER@EXAMPLE.TEST',
  'user_name',
  'correct-length-pw',
  '123456',
  '000000',
  'private',
  'public',
  'image/png',
  'manual',
  'mock',
  'channel_a',
  'channel_b',
  'channel_c',
  '2026/11/21/x.png',
  'incoming/x',
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: fc.emailAddress() },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', '9', '/', '😀', '../'), fc.integer({ min: 200, max: 5000 }))
      .map(([unit, count]) => unit.repeat(count)),
  },
);

/** A value of any JSON type, for a field whose type we want to confuse. */
export const confusedValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER + 2, 100_000_000_01) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constant({ __proto__: { admin: true }, toString: 'x' }) },
);

/** A JSON object over the route's known fields (any may be missing) plus stray ones. */
function knownFieldsObject(fields: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const known =
    fields.length === 0
      ? fc.constant({})
      : fc.record(Object.fromEntries(fields.map((field) => [field, confusedValue])), { requiredKeys: [] });
  return fc
    .tuple(known, fc.dictionary(hostileString, confusedValue, { maxKeys: 3 }))
    .map(([main, stray]) => ({ ...stray, ...main }));
}

// ---- bodies -------------------------------------------------------------------------------------------

export interface Body {
  bytes: Buffer;
  contentType?: string;
}

const contentTypes = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=xyz',
  'image/png',
  'application/octet-stream',
  '*/*',
  ';;;=',
);

const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((array) => Buffer.from(array));

/** JSON bodies: objects over known fields, any JSON value, malformed or oversized text, random bytes. */
export function jsonBody(fields: readonly string[]): fc.Arbitrary<Body> {
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(knownFieldsObject(fields), contentTypes)
        .map(([value, contentType]) => ({ bytes: Buffer.from(JSON.stringify(value)), contentType })),
    },
    {
      weight: 1,
      arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({
        bytes: Buffer.from(JSON.stringify(value) ?? ''),
        contentType: 'application/json',
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(knownFieldsObject(fields), fc.nat()).map(([value, cut]) => {
        const text = JSON.stringify(value);
        return {
          bytes: Buffer.from(text.slice(0, cut % Math.max(1, text.length))),
          contentType: 'application/json',
        };
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('{', '{"a":', '[1,2', '{"a":1}}', "{'a':1}", 'NaN', '\u0000{}', '{"a":1,}', '\uFEFF{}')
        .map((text) => ({ bytes: Buffer.from(text), contentType: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(bytes(300), contentTypes)
        .map(([raw, contentType]) => ({ bytes: raw, contentType })),
    },
    { weight: 1, arbitrary: oversized },
  );
}

/** Over the 64 KiB JSON limit (413 before parsing), as JSON with the known fields or as noise. */
const oversized: fc.Arbitrary<Body> = fc
  .tuple(fc.constantFrom('json', 'noise'), fc.integer({ min: 64 * 1024 + 1, max: 96 * 1024 }))
  .map(([kind, size]) => ({
    bytes:
      kind === 'json'
        ? Buffer.from(
            JSON.stringify({ name: 'x'.repeat(size), email: 'a@b.test', password: 'p'.repeat(size) }),
          )
        : Buffer.alloc(size, 0x7b),
    contentType: 'application/json',
  }));

/** Raw bodies (multipart, forms, callbacks): broken multipart, forms, JSON, bytes. */
export const rawBody: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.tuple(bytes(2048), contentTypes).map(([raw, contentType]) => ({ bytes: raw, contentType })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(hostileString, hostileString, bytes(256), fc.constantFrom('file', 'FILE', 'permission', 'x', ''))
      .map(([boundary, filename, data, name]) => ({
        bytes: Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n\r\n`,
          ),
          data,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
        contentType: `multipart/form-data; boundary=${boundary}`,
      })),
  },
  {
    weight: 1,
    arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 6 }).map((fields) => ({
      bytes: Buffer.from(new URLSearchParams(fields).toString()),
      contentType: 'application/x-www-form-urlencoded',
    })),
  },
  { weight: 1, arbitrary: jsonBody(['sign', 'out_trade_no', 'money', 'resource']) },
);

// ---- headers, query, path -----------------------------------------------------------------------------

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Bearer tokens that are not ours: garbage, unsigned, signed with another key, API-token shaped. */
export const forgedAuthorization: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  hostileString.map((value) => `Bearer ${value}`),
  fc.constantFrom('Bearer', 'Bearer ', 'bearer  x', 'Basic YWRtaW46YWRtaW4=', 'Bearer a b', 'Bearer\tx'),
  fc
    .tuple(
      fc.constantFrom('none', 'HS256', 'RS256'),
      fc.constantFrom('session', 'totp_challenge', 'mock_cashier', 'admin'),
      hostileString,
    )
    .map(
      ([alg, scope, sub]) =>
        `Bearer ${b64url({ alg, typ: 'JWT' })}.${b64url({ sub, scope, role: 'admin', jti: 'x', exp: 4102444800 })}.${alg === 'none' ? '' : 'c2lnbmF0dXJl'}`,
    ),
  fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((tail) => `Bearer ut_${tail}`),
);

const HEADER_NAMES = [
  'content-length',
  'Content-Length',
  'content-type',
  'transfer-encoding',
  'x-forwarded-for',
  'x-real-ip',
  'cookie',
  'host',
  'origin',
  'user-agent',
  'accept-encoding',
  'x-http-method-override',
  'wechatpay-signature',
  'wechatpay-timestamp',
  'wechatpay-serial',
  'channel-b-signature',
  'Authorization',
];

const headerValue: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.constantFrom('-1', '0', '1', '99999999999999999999', 'abc', '1, 2', 'chunked', 'gzip, chunked'),
);

export function hostileHeaders(
  authorization: fc.Arbitrary<string | undefined>,
): fc.Arbitrary<Record<string, string>> {
  return fc
    .tuple(
      fc.dictionary(
        fc.oneof(fc.constantFrom(...HEADER_NAMES), fc.string({ minLength: 1, maxLength: 20 })),
        headerValue,
        {
          maxKeys: 4,
        },
      ),
      authorization,
    )
    .map(([headers, auth]) => ({ ...headers, ...(auth === undefined ? {} : { authorization: auth }) }));
}

export function hostileQuery(names: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constant(''),
    fc
      .dictionary(
        fc.oneof(fc.constantFrom(...names, 'limit', 'cursor', 'token'), hostileString),
        hostileString,
        {
          maxKeys: 4,
        },
      )
      .map((fields) => new URLSearchParams(fields).toString()),
    fc.constantFrom(
      '%',
      '%%%&&==;',
      'a=1&a=2&a=3',
      'limit=-1',
      'limit=1e3',
      'limit=100000',
      'cursor=%FF%FE',
      '=&=&',
    ),
  );
}

export const pathParameter: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((value) => value.length > 0),
  fc.constantFrom('..', '../..', '../../settings', '%2e%2e', 'a/b/../c', '.', 'ORDER', 'x'.repeat(2048)),
  fc.uuid(),
  fc.stringMatching(/^[0-9A-Za-z]{32}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
);

/** encodeURIComponent, which throws on a lone surrogate: those become U+FFFD, as a client would send. */
export function encodeSegment(value: string): string {
  return encodeURIComponent(
    value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'),
  );
}

// ---- events -------------------------------------------------------------------------------------------

export interface HostileRequest {
  params: Record<string, string>;
  query: string;
  headers: Record<string, string>;
  body: Body;
  sourceIp: string;
}

/** Everything hostile about one request to `route`, with the caller's authorization chosen by `caller`. */
export function hostileRequest(
  route: RouteSpec,
  fields: readonly string[],
  authorization: fc.Arbitrary<string | undefined>,
): fc.Arbitrary<HostileRequest> {
  const names = [...route.path.matchAll(/\{(\w+)\+?\}/g)].map((found) => found[1]!);
  const body =
    route.body === 'json'
      ? jsonBody(fields)
      : route.body === 'raw'
        ? rawBody
        : fc.oneof(jsonBody(fields), rawBody);
  return fc.record({
    params: fc.record(Object.fromEntries(names.map((name) => [name, pathParameter]))) as fc.Arbitrary<
      Record<string, string>
    >,
    query: hostileQuery(fields),
    headers: hostileHeaders(authorization),
    body: fc.oneof(
      { weight: 5, arbitrary: body },
      { weight: 1, arbitrary: fc.constant({ bytes: Buffer.alloc(0) }) },
    ),
    sourceIp: fc.ipV4(),
  });
}

/** The API Gateway event for it: path parameters as API Gateway gives them (decoded), the path encoded. */
export function eventFor(route: RouteSpec, request: HostileRequest): ApiEvent {
  const path = route.path.replace(/\{(\w+)(\+?)\}/g, (_match, name: string, greedy: string) => {
    const value = request.params[name] ?? '';
    return greedy ? value.split('/').map(encodeSegment).join('/') : encodeSegment(value);
  });
  const headers: Record<string, string> = { host: 'localhost', ...request.headers };
  if (request.body.contentType !== undefined && !('content-type' in headers))
    headers['content-type'] = request.body.contentType;
  return buildEvent({
    method: route.method,
    url: `${path}${request.query ? `?${request.query}` : ''}`,
    headers,
    body: request.body.bytes,
    sourceIp: request.sourceIp,
    routeKey: routeKeyOf(route),
    pathParameters: request.params,
  });
}

// ---- checks -------------------------------------------------------------------------------------------

function headerOf(result: ApiResult, name: string): string {
  for (const [key, value] of Object.entries(result.headers ?? {})) {
    if (key.toLowerCase() === name) return String(value);
  }
  return '';
}

/**
 * What every answer must be (docs/DESIGN.md 4): never a 5xx; JSON answers are the envelope, with `code` the
 * status on errors and 0 on success; errors are JSON envelopes, except channel callback replies (each
 * channel's own format) and the mock cashier's pages; security headers everywhere.
 */
export function expectWellFormed(route: RouteSpec, result: ApiResult): void {
  const status = result.statusCode ?? 0;
  const context = `${routeKeyOf(route)} -> ${status} ${String(result.body).slice(0, 300)}`;
  expect(status, context).toBeGreaterThanOrEqual(200);
  expect(status, context).toBeLessThan(500);
  expect(headerOf(result, 'x-content-type-options'), context).toBe('nosniff');
  const contentType = headerOf(result, 'content-type');
  const callback = route.group === 'payment-callback';
  // Pages answer their refusals as pages: the cashier's and a share's (docs/DESIGN.md 16).
  const page = route.path.startsWith('/pay/mock/') || /^\/s\/\{id\}$/.test(route.path);
  if (status >= 400 && !callback && !page) expect(contentType, context).toMatch(/^application\/json/);
  if (!/^application\/json/.test(contentType)) return;
  const text = result.isBase64Encoded
    ? Buffer.from(result.body ?? '', 'base64').toString()
    : (result.body ?? '');
  const json = JSON.parse(text) as Record<string, unknown>;
  // The API document is JSON but not an envelope: it is the document itself (docs/openapi.json).
  if (route.path.endsWith('/openapi.json') && status === 200) {
    expect(json.openapi, context).toBe('3.1.0');
    return;
  }
  if (callback && json.code === 'FAIL') {
    // channel_b's own failure reply (docs/DESIGN.md 7)
    expect(typeof json.message, context).toBe('string');
    return;
  }
  if (route.path.startsWith('/compat/') && !/^\/compat\/chevereto\/delete\//.test(route.path)) {
    // A peer's own shape (docs/COMPAT.md): Lsky's `{status, message, data}`, Chevereto's `{status_code, error}`.
    const error = json.error as { message?: unknown; code?: unknown } | undefined;
    expect(typeof (error?.message ?? json.message), context).toBe('string');
    if (status >= 400)
      expect(error?.code ?? (json.status === false || json.status === 'error'), context).toBeTruthy();
    return;
  }
  expect(Object.keys(json).sort(), context).toEqual(['code', 'data', 'message']);
  expect(typeof json.message, context).toBe('string');
  expect(json.code, context).toBe(status >= 400 ? status : 0);
}

// ---- state --------------------------------------------------------------------------------------------

/**
 * Items a rejected request may legitimately write, left out of the comparison:
 * - `throttle#...`: rate counters (per source IP on unauthenticated endpoints, per account or address for
 *   code sending, per account for TOTP tries). Counting rejected attempts is their job (docs/SPEC.md 8).
 * - `audit#...`: the audit log records every administrator action, refused ones with their status
 *   (docs/ACCOUNTS.md "Audit log"); what they did not change is still compared.
 */
export const IGNORED_ITEM_PREFIXES = ['throttle#', 'audit#'] as const;

export interface Snapshot {
  items: Map<string, string>;
  objects: Map<string, string>;
}

export async function snapshot(): Promise<Snapshot> {
  const items = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamoClient(config.aws).send(
      new ScanCommand({ TableName: config.table_name, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) {
      const pk = String(item.pk);
      if (IGNORED_ITEM_PREFIXES.some((prefix) => pk.startsWith(prefix))) continue;
      items.set(`${pk} | ${String(item.sk)}`, JSON.stringify(item, Object.keys(item).sort()));
    }
    start = page.LastEvaluatedKey;
  } while (start);
  const objects = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await s3Client(config.aws).send(
      new ListObjectsV2Command({ Bucket: config.bucket_name, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? [])
      objects.set(serviceKeyOf(object.Key ?? ''), `${object.ETag} ${object.Size}`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { items, objects };
}

/** Differences between two snapshots, as readable lines (empty when equal). */
export function differences(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  const compare = (what: string, a: Map<string, string>, b: Map<string, string>) => {
    for (const [key, value] of b) {
      if (!a.has(key)) lines.push(`${what} added: ${key}`);
      else if (a.get(key) !== value) lines.push(`${what} changed: ${key}: ${a.get(key)} -> ${value}`);
    }
    for (const key of a.keys()) if (!b.has(key)) lines.push(`${what} removed: ${key}`);
  };
  compare('item', before.items, after.items);
  compare('object', before.objects, after.objects);
  return lines;
}

export interface BatchStats {
  compared: string[];
  skipped: string[];
}

/** How the caller authenticates: a token of theirs (fresh per request if need be), or hostile headers. */
export type CallerAuth =
  | { kind: 'token'; token: () => Promise<string> | string }
  | { kind: 'forged'; authorization: fc.Arbitrary<string | undefined> };

export const NO_CREDENTIALS: CallerAuth = {
  kind: 'forged',
  authorization: fc.option(forgedAuthorization, { nil: undefined, freq: 2 }),
};

/**
 * Fuzzes one route for one caller: every answer well formed; when no request of the batch was a write that
 * succeeded (a non-GET 2xx), the table and bucket (minus IGNORED_ITEM_PREFIXES) are exactly as before.
 */
export async function fuzzRoute(options: {
  route: RouteSpec;
  caller: Caller;
  auth: CallerAuth;
  fields: readonly string[];
  handler: GroupHandler;
  stats: BatchStats;
  runs?: number;
}): Promise<void> {
  const { route, caller, handler, stats, auth } = options;
  const label = `${routeKeyOf(route)} as ${caller}`;
  const before = await snapshot();
  const writes: string[] = [];
  const authorization = auth.kind === 'forged' ? auth.authorization : fc.constant(undefined);
  await fc.assert(
    fc.asyncProperty(hostileRequest(route, options.fields, authorization), async (request) => {
      const headers = { ...request.headers };
      if (auth.kind === 'token') {
        delete headers.Authorization;
        headers.authorization = `Bearer ${await auth.token()}`;
      }
      const result = await handler(eventFor(route, { ...request, headers }), lambdaContext);
      expectWellFormed(route, result);
      const status = result.statusCode ?? 0;
      if (route.method !== 'GET' && status < 300) writes.push(String(status));
    }),
    { numRuns: options.runs ?? RUNS, seed: SEED, endOnFailure: true },
  );
  if (writes.length > 0) {
    stats.skipped.push(`${label}: ${writes.length} successful writes`);
    return;
  }
  const changed = differences(before, await snapshot());
  expect(changed, `state changed by rejected requests to ${label} (seed ${SEED})`).toEqual([]);
  stats.compared.push(label);
}

/** Account routes are served at both paths: the field names are keyed by the unprefixed one. */
export function fieldsOf(route: RouteSpec, table: Record<string, readonly string[]>): readonly string[] {
  const account =
    route.path.startsWith(`${API_PREFIX}/auth/`) || route.path.startsWith(`${API_PREFIX}/admin/auth/`);
  return table[`${route.method} ${account ? route.path.slice(API_PREFIX.length) : route.path}`] ?? [];
}

/**
 * Every route crossed with every kind of caller: the fuzz matrix of a hostile-input file. An alias (an
 * account route again under /api/v1) runs its route's own implementation, which the matrix fuzzes for
 * every caller; the alias is fuzzed by one caller, the one that reaches deepest (nobody on an open route,
 * an administrator on an administrators' route, else a user), which shows the prefix reaches the same
 * guards and validation without paying for every batch twice.
 */
export function callerCases(routes: readonly RouteSpec[]) {
  const callers: Caller[] = ['none', 'user', 'admin'];
  const deepest = (route: RouteSpec): Caller =>
    route.auth === 'none' ? 'none' : route.auth === 'admin' ? 'admin' : 'user';
  return routes.flatMap((route) =>
    (route.aliasOf ? [deepest(route)] : callers).map((caller) => [routeKeyOf(route), caller, route] as const),
  );
}

/** A caller's credentials: none, or the bearer token of the user or administrator of the file. */
export function bearerOf(caller: Caller, tokens: { user: () => string; admin: () => string }): CallerAuth {
  if (caller === 'none') return NO_CREDENTIALS;
  return { kind: 'token', token: caller === 'user' ? tokens.user : tokens.admin };
}
