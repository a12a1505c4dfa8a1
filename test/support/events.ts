// Small factories for API Gateway payload-2.0 events, built by the same translation as the local server's.
import type { Context } from 'aws-lambda';
import { buildEvent } from '#infra/local/api-event.ts';
import type { ApiEvent } from '#lib/http/event.ts';
import { matchRoute } from '#lib/http/routes.ts';

export interface EventInput {
  method?: string;
  path: string;
  body?: string | Buffer | object;
  headers?: Record<string, string>;
  sourceIp?: string;
}

export function apiEvent({
  method = 'GET',
  path,
  body,
  headers = {},
  sourceIp = '203.0.113.7',
}: EventInput): ApiEvent {
  const url = new URL(path, 'http://localhost');
  const match = matchRoute(method, decodeURIComponent(url.pathname));
  let bytes: Buffer = Buffer.alloc(0);
  const allHeaders: Record<string, string> = { host: 'localhost', ...headers };
  if (Buffer.isBuffer(body)) bytes = body;
  else if (typeof body === 'string') bytes = Buffer.from(body);
  else if (body !== undefined) {
    bytes = Buffer.from(JSON.stringify(body));
    allHeaders['content-type'] ??= 'application/json';
  }
  return buildEvent({
    method,
    url: path,
    headers: allHeaders,
    body: bytes,
    sourceIp,
    routeKey: match ? `${match.route.method} ${match.route.path}` : '$default',
    pathParameters: match?.params,
  });
}

export const lambdaContext = {
  awsRequestId: 'test',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

export function parseBody(result: { body?: string; isBase64Encoded?: boolean }): unknown {
  const text = result.isBase64Encoded
    ? Buffer.from(result.body ?? '', 'base64').toString()
    : (result.body ?? '');
  return JSON.parse(text);
}
