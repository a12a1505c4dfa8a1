// The local API Gateway: real HTTP in, payload-2.0 events to the same handlers the route table names,
// their results back out as HTTP. The event's shape is api-event.ts's, shared with the tests' gateways.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import { type AppError, errors } from '#lib/core/errors.ts';
import { SECURITY_HEADERS } from '#lib/http/envelope.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import { DEFAULT_ROUTE_GROUP, type FunctionGroup, matchRoute, routeKeyOf } from '#lib/http/routes.ts';
import { buildEvent, safeDecode } from './api-event.ts';
import { type ConsoleSite, serveConsole } from './console.ts';
import { followRequestHost } from './follow-host.ts';

export type GroupHandler = (event: ApiEvent, context: Context) => Promise<ApiResult>;
export type HandlerLoader = (group: FunctionGroup) => Promise<GroupHandler>;

/** A request body may be at most what a synchronous Lambda invocation accepts. */
export const LOCAL_PAYLOAD_LIMIT = 6 * 1024 * 1024;

function lambdaContext(group: FunctionGroup, requestId: string): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${group}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${group}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/local-${group}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function sendEnvelope(response: ServerResponse, status: number, message: string, data: unknown = null): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ code: status, message, data }));
}

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function writeResult(response: ServerResponse, result: ApiResult): void {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  if (result.cookies && result.cookies.length > 0) headers['set-cookie'] = result.cookies;
  const body =
    result.body === undefined
      ? Buffer.alloc(0)
      : result.isBase64Encoded
        ? Buffer.from(result.body, 'base64')
        : Buffer.from(result.body, 'utf8');
  headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

export interface LocalServerOptions {
  loadHandler: HandlerLoader;
  /** Origins answered with CORS headers; default any http://localhost:<port> (a front end in development). */
  corsOrigins?: readonly string[];
  /** Routes the local server answers itself (e.g. streaming stored files, which Lambda would not). */
  direct?: (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean>;
  onError?: (error: unknown) => void;
  /** The web console's build, served at `/` and `/console/*` as the CDN serves it (infra/local/console.ts). */
  console?: ConsoleSite;
  /** Headers the CDN would add (the origin secret, the viewer's address): infra/local/front-door.ts. */
  edgeHeaders?: (request: IncomingMessage) => Record<string, string>;
  /** base_url's origin while it is a loopback one: answers name the request's Host instead (follow-host.ts). */
  linkOrigin?: string;
  /** What a body over the payload limit answers on this route (an upload names its file limit). */
  tooLarge?: (routeKey: string) => AppError | undefined;
}

export function createLocalServer(options: LocalServerOptions): Server {
  return createServer((request, response) => {
    handle(request, response, options).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) sendEnvelope(response, 500, 'Internal server error');
      else response.destroy();
    });
  });
}

const LOCALHOST_ORIGIN = /^http:\/\/localhost(:\d{1,5})?$/;

/** The CORS headers for this request's origin, or none when the origin is not allowed. */
export function corsHeaders(
  origin: string | undefined,
  allowed: readonly string[] | undefined,
): Record<string, string> {
  if (!origin) return {};
  const ok = allowed ? allowed.includes(origin) : LOCALHOST_ORIGIN.test(origin);
  if (!ok) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': 'retry-after, x-request-id',
    vary: 'Origin',
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: LocalServerOptions) {
  const method = (request.method ?? 'GET').toUpperCase();
  const url = new URL(request.url ?? '/', 'http://localhost');
  const cors = corsHeaders(request.headers.origin, options.corsOrigins);
  // A browser's preflight, answered as API Gateway's CORS configuration would (docs/DEPLOYMENT.md).
  if (method === 'OPTIONS' && request.headers['access-control-request-method']) {
    request.resume();
    response.writeHead(cors['access-control-allow-origin'] ? 204 : 403, {
      ...SECURITY_HEADERS,
      ...cors,
      ...(cors['access-control-allow-origin']
        ? {
            'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
            'access-control-allow-headers': 'authorization, content-type',
            'access-control-max-age': '3600',
          }
        : {}),
    });
    response.end();
    return;
  }
  for (const [name, value] of Object.entries(cors)) response.setHeader(name, value);
  if (options.console && serveConsole(options.console, request, response, url)) return;
  if (options.direct && (await options.direct(request, response, url))) return;

  const match = matchRoute(method, safeDecode(url.pathname));
  const group = match?.route.group ?? DEFAULT_ROUTE_GROUP;
  const routeKey = match ? routeKeyOf(match.route) : '$default';
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > LOCAL_PAYLOAD_LIMIT) request.resume();
  const body = declared > LOCAL_PAYLOAD_LIMIT ? undefined : await readBody(request, LOCAL_PAYLOAD_LIMIT);
  if (!body) {
    // In the route's own words, as its handler says it for a body just over its limit (docs/UPLOADS.md).
    const refusal = options.tooLarge?.(routeKey) ?? errors.payloadTooLarge(LOCAL_PAYLOAD_LIMIT);
    sendEnvelope(response, 413, refusal.message, refusal.data);
    return;
  }
  const event = buildEvent({
    method,
    url: request.url ?? '/',
    headers: options.edgeHeaders ? { ...request.headers, ...options.edgeHeaders(request) } : request.headers,
    body,
    sourceIp: request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
    routeKey,
    pathParameters: match?.params,
  });
  const handler = await options.loadHandler(group);
  const result = await handler(event, lambdaContext(group, event.requestContext.requestId));
  const { linkOrigin } = options;
  writeResult(response, linkOrigin ? followRequestHost(result, linkOrigin, request.headers.host) : result);
}
