// What every HTTP request leaves behind (docs/OBSERVABILITY.md): the `x-request-id` answer header, exactly one
// access line, the request metrics per route and the business counts a route's outcome implies (written in
// that line: one line per request). A middy middleware, used first by lib/http/handler.ts so it sees the
// final answer of every outcome, errors and 404s included.
import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { currentLogContext } from '#lib/platform/log.ts';
import { recordMetric, writeRequestLine } from '#lib/platform/observability/metrics.ts';
import { annotateRequest } from '#lib/platform/observability/tracing.ts';
import type { ApiEvent, ApiResult } from './event.ts';
import { API_PREFIX } from './routes.ts';
import type { Principal } from './types.ts';

/** The route a request matched (`METHOD /template`) and who called, as the handler established them. */
export interface RequestFacts {
  route?: string;
  principal?: Pick<Principal, 'via' | 'role' | 'accountId'>;
}

/** The route dimension of a request that matched no route of its function. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The id a caller can quote: API Gateway's request id, else Lambda's (a function URL event carries one too),
 * else a fresh one.
 */
export function requestIdOf(event: Partial<ApiEvent> | undefined, context?: Partial<Context>): string {
  return event?.requestContext?.requestId || context?.awsRequestId || randomUUID();
}

/** 5xx answers that are failures: 501 (a known gap) and 507 (an account at its quota) are not. */
export function isServerFailure(status: number): boolean {
  return status >= 500 && status !== 501 && status !== 507;
}

/**
 * The middleware: `describe` reads what the handler learnt of the request (route, principal), since the
 * route of a `$default` event is found by the handler, not by API Gateway.
 */
export function observeRequests(
  describe: (event: ApiEvent) => RequestFacts,
): MiddlewareObj<ApiEvent, ApiResult, Error, Context> {
  // Keyed by middy's request object, one per invocation (an event object may be handed in twice).
  type Invocation = { event: ApiEvent; context: Context; response: ApiResult | null | undefined };
  const started = new WeakMap<Invocation, number>();
  // An `after` that throws sends middy on to `onError`: still one line per request.
  const finished = new WeakSet<Invocation>();
  const finish = (request: Invocation) => {
    const { response, event } = request;
    if (!response || finished.has(request)) return;
    finished.add(request);
    const requestId = currentLogContext()?.requestId ?? requestIdOf(event, request.context);
    response.headers = { ...response.headers, 'x-request-id': requestId };
    const facts = describe(event);
    // Account routes answer with and without the /api/v1 prefix (docs/DESIGN.md 4): one route for both.
    const route = (facts.route ?? UNMATCHED_ROUTE).replace(ACCOUNT_PREFIX, '$1 $2');
    const status = response.statusCode ?? 200;
    const begun = started.get(request);
    const durationMs = begun === undefined ? 0 : Math.round((performance.now() - begun) * 10) / 10;
    const principal = facts.principal;
    // The token or session that proved who called is never written: its kind, role and account only.
    writeRequestLine('request', {
      method: event.requestContext?.http?.method?.toUpperCase(),
      route,
      status,
      duration_ms: durationMs,
      principal: principal?.via ?? 'none',
      ...(principal ? { role: principal.role, account_id: principal.accountId } : {}),
    });
    recordRequest(route, status, durationMs);
    recordBusinessCounts(route, status, response);
    annotateRequest(route, status);
  };
  return {
    before: (request) => {
      started.set(request, performance.now());
    },
    after: finish,
    onError: finish,
  };
}

/** Latency on every request (its sample count is the request count); the errors only when there is one. */
function recordRequest(route: string, status: number, durationMs: number): void {
  const dimensions = { route };
  recordMetric('Latency', { value: durationMs, unit: 'Milliseconds', dimensions });
  if (status >= 400 && status < 500) recordMetric('ClientErrors', { dimensions });
  if (isServerFailure(status)) recordMetric('ServerErrors', { dimensions });
}

const ACCOUNT_PREFIX = new RegExp(`^(\\w+) ${API_PREFIX}(/(?:admin/)?auth/)`);
const LOGIN_ROUTES = new Set(['POST /auth/login', 'POST /admin/auth/login']);
const TOTP_VERIFY = 'POST /auth/totp/verify';
const UPLOAD_ROUTES = new Set([`POST ${API_PREFIX}/upload`, `POST ${API_PREFIX}/upload/confirm`]);
const ORDER_CREATE = `POST ${API_PREFIX}/orders`;
/** A provider name as the route table knows them; anything else is not used as a dimension. */
const PROVIDER_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * Business counts derived from a route's outcome (docs/OBSERVABILITY.md lists them); `route` is the account
 * route without its /api/v1 prefix. Dimensions are route templates and provider names, never ids or paths.
 */
function recordBusinessCounts(route: string, status: number, response: ApiResult): void {
  if (status === 429) recordMetric('Throttled', { dimensions: { route } });
  if (LOGIN_ROUTES.has(route)) {
    if (status === 200) {
      const challenged = dataOf(response)?.totp_required === true;
      recordMetric(challenged ? 'LoginChallenges' : 'Logins', { dimensions: { route } });
    } else if (status === 401) recordMetric('LoginsFailed', { dimensions: { route } });
    return;
  }
  if (route === TOTP_VERIFY) {
    if (status === 200) recordMetric('Logins', { dimensions: { route } });
    else if (status === 401) recordMetric('TotpFailures');
    return;
  }
  if (UPLOAD_ROUTES.has(route) && status === 200) {
    const size = dataOf(response)?.size;
    recordMetric('Uploads', { dimensions: { route } });
    if (typeof size === 'number' && Number.isFinite(size))
      recordMetric('UploadedBytes', { value: size, unit: 'Bytes', dimensions: { route } });
    return;
  }
  if (route === ORDER_CREATE && status === 201) {
    const provider = dataOf(response)?.provider;
    if (typeof provider === 'string' && PROVIDER_NAME.test(provider))
      recordMetric('OrdersCreated', { dimensions: { provider } });
  }
}

/** The `data` of a JSON envelope answer (read only for the few routes counted from their answer). */
function dataOf(response: ApiResult): Record<string, unknown> | undefined {
  if (typeof response.body !== 'string' || response.isBase64Encoded) return undefined;
  try {
    const data = (JSON.parse(response.body) as { data?: unknown }).data;
    return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
