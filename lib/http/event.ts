// Translation between API Gateway HTTP API (payload 2.0) events/results and the plain shapes in types.ts.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpRequest, HttpResult } from './types.ts';

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;

export function rawBodyOf(event: ApiEvent): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/** Headers by which the CDN in front of the API names the viewer (infra/edge.ts, infra/cdn.ts). */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/**
 * The request as routes see it. The client's address is the connection's: behind CloudFront the front door
 * (lib/http/front-door.ts) has already put the viewer's address there for a request carrying the CDN's
 * proof. Never X-Forwarded-For, which any client can write (docs/DESIGN.md 5).
 */
export function requestFromEvent(event: ApiEvent): HttpRequest<unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  // Routes never see the proof (a secret) nor an address claim they might trust by mistake.
  delete headers[ORIGIN_VERIFY_HEADER];
  delete headers[VIEWER_ADDRESS_HEADER];
  return {
    routeKey: event.routeKey,
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    params: definedOf(event.pathParameters),
    query: definedOf(event.queryStringParameters),
    rawQuery: event.rawQueryString ?? '',
    headers,
    cookies: event.cookies ?? [],
    body: undefined,
    rawBody: rawBodyOf(event),
    sourceIp: event.requestContext.http.sourceIp,
    userAgent: event.requestContext.http.userAgent ?? '',
    requestId: event.requestContext.requestId,
  };
}

function definedOf(values: Record<string, string | undefined> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values ?? {}).filter(([, value]) => value !== undefined),
  ) as Record<string, string>;
}

export function resultToApi(result: HttpResult): ApiResult {
  const headers: Record<string, string> = { ...(result.headers ?? {}) };
  if (result.kind === 'json') {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    return { statusCode: result.status, headers, body: JSON.stringify(result.body), isBase64Encoded: false };
  }
  if (Buffer.isBuffer(result.body)) {
    return {
      statusCode: result.status,
      headers,
      body: result.body.toString('base64'),
      isBase64Encoded: true,
    };
  }
  return { statusCode: result.status, headers, body: result.body, isBase64Encoded: false };
}
