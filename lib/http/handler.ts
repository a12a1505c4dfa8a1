// Builds one Lambda handler per function group: a middy chain that normalises headers, picks the route
// by API Gateway's routeKey, parses and validates the body, authenticates, runs the route, and turns
// every outcome into the envelope with security headers.
import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { Context } from 'aws-lambda';
import { errors, type FieldProblem } from '#lib/core/errors.ts';
import { withInvocation } from '#lib/platform/observability/invocation.ts';
import type * as z from '#lib/platform/zod.ts';
import { type AdminActionLog, auditAdminActions, isAdminAction } from './admin-audit.ts';
import { type BanCheck, banCheck } from './ban-check.ts';
import { SECURITY_HEADERS } from './envelope.ts';
import { errorResult } from './errors.ts';
import { type ApiEvent, type ApiResult, requestFromEvent, resultToApi } from './event.ts';
import { type FrontDoorOptions, frontDoorCheck } from './front-door.ts';
import { observeRequests, requestIdOf } from './observability.ts';
import {
  type AuthKind,
  type FunctionGroup,
  matchRoute,
  ROUTES,
  type RouteKey,
  type RouteSpec,
  routeKeyOf,
} from './routes.ts';
import type { HttpRequest, HttpResult, Principal } from './types.ts';

/** A schema (lib/platform/zod.ts) whose parse yields `T`. */
export type Schema<T = unknown> = z.ZodMiniType<T>;

/** What a function group provides for one route of the table. */
export interface RouteImpl<Body = unknown, Query = Record<string, string>> {
  /** Schema of the JSON body (json routes). Unknown fields are dropped, per docs/DESIGN.md 4. */
  body?: Schema<Body>;
  /** Schema of the query string parameters. */
  query?: Schema<Query>;
  /** Largest body accepted, in bytes; larger is 413 before any parsing. */
  maxBodyBytes?: number;
  /**
   * What a body over `maxBodyBytes` answers, when the route can say it in its user's terms (an upload names
   * its file limit, not the body's, which adds the form's overhead); else a 413 naming the byte limit.
   */
  tooLarge?: () => Error;
  /**
   * Schema of the success envelope's `data` (the API document, GET /api/v1/openapi.json, is generated from
   * it and the contract tests validate answers against it); routes that answer text or HTML have none.
   */
  response?: Schema;
  /** What a success answers (default 200; creations 201; a redirect 302). */
  successStatus?: 200 | 201 | 202 | 302;
  /** One line for the API document. */
  summary?: string;
  /**
   * An administrator's action records its own, richer audit event (lib/http/admin-audit.ts records every
   * other one).
   */
  audit?: 'by-route';
  /** Error statuses this route answers beyond those its auth kind and input imply (lib/http/openapi.ts). */
  errors?: readonly number[];
  /** For routes answering other than the JSON envelope (pages, files, channel replies). */
  responseContentType?: string;
  responseDescription?: string;
  /** For raw bodies (multipart uploads, channel notifications, the cashier form). */
  requestContentType?: string;
  run(request: HttpRequest<Body, Query>): Promise<HttpResult>;
}

/** A route, typed by its schemas: `run` sees the body and query they parse to. */
export function defineRoute<Body = unknown, Query = Record<string, string>>(
  impl: RouteImpl<Body, Query>,
): RouteImpl<Body, Query> {
  return impl;
}

// biome-ignore lint/suspicious/noExplicitAny: a table of routes with different body types
export type AnyRoute = RouteImpl<any, any>;
/** Implementations of some routes, by the route table's keys (lib/http/routes.ts). */
export type RouteImpls = Partial<Record<RouteKey, AnyRoute>>;
/**
 * A group's implementations: exactly one per route of its rows in the table, so a missing handler, or a key
 * that names no route of the group (a misspelling), fails `tsc`.
 */
export type GroupRoutes<G extends FunctionGroup, Impls> = Record<RouteKey<G>, AnyRoute> & {
  [Extra in Exclude<keyof Impls, RouteKey<G>>]: never;
};

/** Establishes who is calling for a route's auth kind; throws 401/403 AppErrors. */
export type Authenticator = (request: HttpRequest, kind: AuthKind) => Promise<Principal | undefined>;

/**
 * The authenticator of a group whose routes all take no credentials (auth kind `none`, or `signed`, which
 * the route checks itself), so the group need not load the session machinery. createGroupHandler refuses
 * it for a group with any other route.
 */
export const noCredentials: Authenticator = async (_request, kind) => {
  if (kind === 'none' || kind === 'signed') return undefined;
  throw new Error(`A route of auth kind ${kind} was served without an authenticator`);
};

/** Sees every event and the result sent for it (tests use it to scan all responses for secrets). */
export type ResultObserver = (event: ApiEvent, result: ApiResult, group: FunctionGroup) => void;
const resultObservers = new Set<ResultObserver>();

/** Adds an observer of every result; returns the function that removes it. */
export function observeResults(observer: ResultObserver): () => void {
  resultObservers.add(observer);
  return () => resultObservers.delete(observer);
}

const ROUTE_BY_KEY = new Map(ROUTES.map((route) => [`${route.method} ${route.path}`, route]));

interface RequestState {
  request: HttpRequest;
  spec?: RouteSpec;
  impl?: RouteImpl;
}

type MiddyRequest = middy.Request<ApiEvent, ApiResult, Error, Context>;

/** What a group's production entry hands its handler: the front door, and the bans (lib/wiring/bans.ts). */
export interface EntryOptions extends FrontDoorOptions {
  bans?: BanCheck;
}

export interface GroupHandlerOptions extends EntryOptions {
  authenticate: Authenticator;
  /** Runs once before the first request is served (e.g. settings that must exist). */
  warmUp?: () => Promise<void>;
  /** The audit log administrators' actions are recorded in; required where the group has one. */
  audit?: () => AdminActionLog;
}

/** A group's Lambda handler over its routes' implementations, all of them (tsc checks the keys). */
export function createGroupHandler<G extends FunctionGroup, Impls extends GroupRoutes<G, Impls>>(
  group: G,
  impls: Impls,
  options: GroupHandlerOptions,
) {
  return handlerOverRoutes(group, impls, options);
}

/**
 * The same chain over some of a group's routes (the others answer 501): what tests of the chain itself
 * build around a route or two; a group's entry uses createGroupHandler.
 */
export function handlerOverRoutes(group: FunctionGroup, impls: RouteImpls, options: GroupHandlerOptions) {
  for (const key of Object.keys(impls)) {
    const spec = ROUTE_BY_KEY.get(key);
    if (!spec || spec.group !== group)
      throw new Error(`Route ${key} is not a ${group} route in lib/http/routes.ts`);
    if (options.authenticate === noCredentials && spec.auth !== 'none' && spec.auth !== 'signed')
      throw new Error(`Route ${key} takes ${spec.auth} credentials: its group needs an authenticator`);
    if (!options.audit && isAdminAction(spec) && impls[key as RouteKey]?.audit !== 'by-route')
      throw new Error(`Route ${key} is an administrator's action: its group needs the audit log`);
  }
  const states = new WeakMap<ApiEvent, RequestState>();
  const stateOf = (request: MiddyRequest): RequestState => {
    const state = states.get(request.event);
    if (!state) throw new Error('request state missing');
    return state;
  };
  let warm: Promise<void> | undefined;

  const resolveRoute: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    before: async (request) => {
      const httpRequest = requestFromEvent(request.event);
      // API Gateway's `$default` route and Lambda function URLs (the channels' notify address) carry no
      // route: find it from the path, as API Gateway would have, among this group's routes.
      if (httpRequest.routeKey === '$default') {
        const match = matchRoute(httpRequest.method, httpRequest.path);
        if (match?.route.group === group) {
          httpRequest.routeKey = `${match.route.method} ${match.route.path}`;
          httpRequest.params = match.params;
        }
      }
      const spec = ROUTE_BY_KEY.get(httpRequest.routeKey);
      const state: RequestState = { request: httpRequest };
      states.set(request.event, state);
      if (!spec || spec.group !== group) {
        throw errors.notFound(`No route for ${httpRequest.method} ${httpRequest.path}`);
      }
      state.spec = spec;
      // An alias (an account route under /api/v1) runs its route's implementation.
      state.impl = impls[routeKeyOf({ method: spec.method, path: spec.aliasOf ?? spec.path }) as RouteKey];
      if (!state.impl) throw errors.notImplemented(`${spec.method} ${spec.path}`);
      if (options.warmUp) {
        warm ??= options.warmUp().catch((error: unknown) => {
          warm = undefined; // try again on the next request rather than failing forever
          throw error;
        });
        await warm;
      }
    },
  };

  const parseBody: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    before: (request) => {
      const { request: httpRequest, spec, impl } = stateOf(request);
      if (!spec || !impl) return;
      const limit = impl.maxBodyBytes ?? (spec.body === 'json' ? 64 * 1024 : undefined);
      if (limit !== undefined && httpRequest.rawBody.length > limit) {
        throw impl.tooLarge?.() ?? errors.payloadTooLarge(limit);
      }
      if (spec.body !== 'json') return;
      const text = httpRequest.rawBody.toString('utf8').trim();
      if (text === '') {
        httpRequest.body = {};
        return;
      }
      try {
        httpRequest.body = JSON.parse(text);
      } catch {
        throw errors.malformedJson();
      }
      if (
        typeof httpRequest.body !== 'object' ||
        httpRequest.body === null ||
        Array.isArray(httpRequest.body)
      ) {
        throw errors.badRequest('Request body must be a JSON object');
      }
    },
  };

  const authenticate: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    before: async (request) => {
      const { request: httpRequest, spec } = stateOf(request);
      if (!spec) return;
      httpRequest.principal = await options.authenticate(httpRequest, spec.auth);
    },
  };

  const validate: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    before: (request) => {
      const { request: httpRequest, impl } = stateOf(request);
      if (!impl) return;
      if (impl.body) httpRequest.body = parseWith(impl.body, httpRequest.body, '');
      if (impl.query) httpRequest.query = parseWith(impl.query, httpRequest.query, 'query.') as never;
    },
  };

  const errorEnvelope: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    onError: (request) => {
      request.response = resultToApi(errorResult(request.error));
    },
  };

  const securityHeaders: MiddlewareObj<ApiEvent, ApiResult, Error, Context> = {
    after: (request) => addSecurityHeaders(request.response),
    onError: (request) => addSecurityHeaders(request.response),
  };

  // What the access line and the metrics name a request by: its route template and who called.
  const describe = (event: ApiEvent) => {
    const state = states.get(event);
    return {
      ...(state?.spec ? { route: `${state.spec.method} ${state.spec.path}` } : {}),
      ...(state?.request.principal ? { principal: state.request.principal } : {}),
    };
  };

  const chain = middy<ApiEvent, ApiResult, Error, Context>()
    // First, so it sees the final answer of every outcome: x-request-id, the access line, the metrics.
    .use(observeRequests(describe))
    .use(securityHeaders)
    .use(errorEnvelope)
    .use(httpHeaderNormalizer())
    // Only what came through the CDN is served (lib/http/front-door.ts); before any routing.
    .use(frontDoorCheck(options.frontDoor, options))
    // A banned viewer (its address is known once past the front door) hears 403 on every route.
    .use(banCheck(options.bans))
    .use(resolveRoute)
    // Credentials first: who may not call a route hears 401/403, whatever its body.
    .use(authenticate)
    .use(parseBody)
    .use(validate)
    .use(
      auditAdminActions({
        log: () => {
          if (!options.audit) throw new Error(`The ${group} group has no audit log`);
          return options.audit();
        },
        stateOf: (event) => {
          const state = states.get(event);
          return state && { ...state, selfAudited: state.impl?.audit === 'by-route' };
        },
      }),
    )
    .handler(async (event) => {
      const state = states.get(event);
      if (!state?.impl) throw errors.notFound();
      return resultToApi(await state.impl.run(state.request));
    });

  const handler = (event: ApiEvent, context: Context): Promise<ApiResult> =>
    withInvocation({ name: group, context, requestId: requestIdOf(event, context) }, async () => {
      const result = await chain(event, context);
      for (const observe of resultObservers) observe(event, result, group);
      return result;
    });
  // The implementations ride along for the API document (lib/http/openapi.ts); nothing calls them there.
  return Object.assign(handler, { group, routes: impls });
}

export type GroupHandler = ReturnType<typeof handlerOverRoutes>;

function parseWith<T>(schema: Schema<T>, value: unknown, prefix: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const fields: FieldProblem[] = parsed.error.issues.map((issue) => ({
    field: `${prefix}${issue.path.map(String).join('.')}` || 'body',
    message: plainMessage(issue),
  }));
  throw errors.validation(fields);
}

/**
 * One wording for the common problems on every route (`permission: must be one of private, public`),
 * in place of zod's defaults; messages a schema wrote itself are kept.
 */
export function plainMessage(issue: z.core.$ZodIssue): string {
  const { message } = issue;
  if (!/^(Invalid input|Invalid option|Too big|Too small)/.test(message)) return message;
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map(String).join(', ')}`;
  if (issue.code === 'invalid_type') {
    if (/received undefined$/.test(message)) return 'is required';
    const expected = String(issue.expected);
    return `must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
  }
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const bound = String(issue.code === 'too_big' ? issue.maximum : issue.minimum);
    const side = issue.code === 'too_big' ? 'at most' : 'at least';
    const one = bound === '1';
    if (issue.origin === 'string') {
      if (one && issue.code === 'too_small') return 'must not be empty';
      return `must be ${side} ${bound} ${one ? 'character' : 'characters'}`;
    }
    if (issue.origin === 'array' || issue.origin === 'set') {
      if (one && issue.code === 'too_small') return 'must not be empty';
      return `must have ${side} ${bound} ${one ? 'item' : 'items'}`;
    }
    return `must be ${side} ${bound}`;
  }
  return message;
}

function addSecurityHeaders(response: ApiResult | null | undefined): void {
  if (!response) return;
  response.headers = { ...SECURITY_HEADERS, ...(response.headers ?? {}) };
}
