// Every administrator action in the audit log (docs/ACCOUNTS.md "Audit log"): a route of auth kind `admin`
// that changes something writes its event (who, what, on what, from where) BEFORE it runs, and its outcome
// (the status it answered, the id a creation made) after. An action whose event cannot be written does not
// run (the caller hears 503), so no administrator action goes unrecorded; one that fails still leaves its
// event, with the status it failed with. Routes that record a richer event themselves say `audit: 'by-route'`.
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { AuditEvent } from '#lib/accounts/audit-log.ts';
import { AppError } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import { statusOf } from './errors.ts';
import type { ApiEvent, ApiResult } from './event.ts';
import type { RouteSpec } from './routes.ts';
import type { HttpRequest } from './types.ts';

/** What the middleware needs of the log (lib/accounts/audit-log.ts). */
export interface AdminActionLog {
  record(event: Omit<AuditEvent, 'id' | 'at'>): Promise<Pick<AuditEvent, 'id'>>;
  finish(id: string, outcome: { status: number; target?: string }): Promise<void>;
}

/** Whether a route is an administrator's action the middleware records. */
export const isAdminAction = (spec: Pick<RouteSpec, 'auth' | 'method'>) =>
  spec.auth === 'admin' && spec.method !== 'GET';

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/**
 * The action a route names: the path's words after `admin`, and what it does to them.
 * `POST /api/v1/admin/bans` is `bans.create`, `PATCH .../accounts/{id}` `accounts.update`,
 * `POST .../orders/{id}/refund` `orders.refund`, `POST .../accounts/{id}/totp/reset` `accounts.totp.reset`.
 */
export function actionOf(spec: Pick<RouteSpec, 'method' | 'path'>): string {
  const segments = spec.path.split('/');
  const words = segments.slice(segments.indexOf('admin') + 1);
  const resource = words[0] ?? 'admin';
  const tail = words.slice(1).filter((word) => !word.startsWith('{'));
  return [resource, ...(tail.length > 0 ? tail : [VERBS[spec.method] ?? spec.method.toLowerCase()])].join(
    '.',
  );
}

/** `<resource>:<id>`: the path's id, or for a creation the id its answer carries (found after it runs). */
function targetOf(spec: RouteSpec, request: HttpRequest, answer?: unknown): string | undefined {
  const resource = actionOf(spec).split('.')[0]!;
  const id = request.params.id ?? idIn(answer);
  return id === undefined ? undefined : `${resource}:${id}`;
}

/** The `id` of an answer's data, or of the one object inside it (`{ban: {id}}`). */
function idIn(answer: unknown): string | undefined {
  const data = (answer as { data?: unknown } | undefined)?.data;
  if (!data || typeof data !== 'object') return undefined;
  const own = (data as { id?: unknown }).id;
  if (typeof own === 'string') return own;
  const inner = Object.values(data).filter((value) => value && typeof value === 'object');
  const nested = inner.length === 1 ? (inner[0] as { id?: unknown }).id : undefined;
  return typeof nested === 'string' ? nested : undefined;
}

/** A request's body field names: what was changed, never the values (a key or a password may be one). */
const fieldsOf = (body: unknown) =>
  body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).sort() : [];

type Middleware = MiddlewareObj<ApiEvent, ApiResult, Error, Context>;

export interface AdminAuditInput {
  log: () => AdminActionLog;
  /** The request as routing, authentication and validation left it, and whether its route records itself. */
  stateOf(event: ApiEvent): { request: HttpRequest; spec?: RouteSpec; selfAudited: boolean } | undefined;
}

/** The middleware: placed after validation (a refused body is no action) and before the route runs. */
export function auditAdminActions(input: AdminAuditInput): Middleware {
  const pending = new WeakMap<ApiEvent, string>();
  const finish = async (event: ApiEvent, status: number, answer?: unknown) => {
    const id = pending.get(event);
    const state = input.stateOf(event);
    if (id === undefined || !state?.spec) return;
    const target = targetOf(state.spec, state.request, answer);
    try {
      await input.log().finish(id, { status, ...(target === undefined ? {} : { target }) });
    } catch (error) {
      // The event is written; only its outcome is missing, which the log shows as unfinished.
      log.error('audit outcome not recorded', { error, audit_id: id });
    }
  };
  return {
    before: async (request) => {
      const state = input.stateOf(request.event);
      if (!state?.spec || state.selfAudited || !isAdminAction(state.spec)) return;
      const { request: http, spec } = state;
      const recorded = await input.log().record({
        actor_id: http.principal?.accountId ?? '',
        action: actionOf(spec),
        target: targetOf(spec, http) ?? actionOf(spec).split('.')[0]!,
        from: http.sourceIp,
        details: { fields: fieldsOf(http.body) },
      });
      pending.set(request.event, recorded.id);
    },
    after: async (request) => {
      const response = request.response;
      let answer: unknown;
      try {
        answer = response?.body && !response.isBase64Encoded ? JSON.parse(response.body) : undefined;
      } catch {
        answer = undefined;
      }
      await finish(request.event, response?.statusCode ?? 200, answer);
    },
    // Before the envelope is made (middy runs onError handlers last-registered first): the status from the error.
    onError: async (request) => {
      await finish(request.event, request.error instanceof AppError ? statusOf(request.error) : 500);
    },
  };
}
