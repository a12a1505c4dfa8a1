// Translation between API Gateway HTTP API (payload 2.0) events/results and the plain shapes in types.ts.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpRequest, HttpResult } from './types.ts';

export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;

export function rawBodyOf(event: ApiEvent): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

export function requestFromEvent(event: ApiEvent): HttpRequest<unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) query[name] = value;
  }
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) params[name] = value;
  }
  return {
    routeKey: event.routeKey,
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    params,
    query,
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
