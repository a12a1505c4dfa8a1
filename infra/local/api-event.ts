// What API Gateway (HTTP API, payload 2.0) makes of a plain HTTP request: the one translation the local
// server, the deployed-shape test's gateway and the in-process test events share. The reverse of
// lib/http/event.ts, which reads the event back into the app's request.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiEvent } from '#lib/http/event.ts';

// API Gateway passes these content types as text and base64-encodes everything else.
const TEXTUAL =
  /^(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|x-www-form-urlencoded|javascript))/i;

export function buildEvent(input: {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  sourceIp: string;
  routeKey: string;
  pathParameters?: Record<string, string>;
}): ApiEvent {
  const parsed = new URL(input.url, 'http://localhost');
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(input.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie') {
      cookies = (Array.isArray(value) ? value.join('; ') : value).split(/;\s*/).filter(Boolean);
      continue;
    }
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of parsed.searchParams) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }
  const contentType = headers['content-type'] ?? '';
  const textual = input.body.length === 0 || TEXTUAL.test(contentType);
  const now = new Date();
  const path = safeDecode(parsed.pathname);
  return {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: path,
    rawQueryString: parsed.search.replace(/^\?/, ''),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(input.pathParameters && Object.keys(input.pathParameters).length > 0
      ? { pathParameters: input.pathParameters }
      : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: input.method,
        path,
        protocol: 'HTTP/1.1',
        sourceIp: input.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: input.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(input.body.length > 0
      ? {
          body: textual ? input.body.toString('utf8') : input.body.toString('base64'),
          isBase64Encoded: !textual,
        }
      : { isBase64Encoded: false }),
  } as ApiEvent;
}

/** A path as routes match it; a malformed escape is left as sent, for the route to refuse. */
export function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
