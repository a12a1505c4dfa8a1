// The console's API client: typed from the API document (docs/openapi.json -> schema.d.ts, `npm run
// openapi:web`), same origin, the session as a Bearer header. Every answer is the envelope of docs/SPEC.md
// 7 ({code, message, data}); `call` returns `data` or throws an ApiError that names fields and retry times.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';
import { session } from './session.ts';

/** The `data` of a path's success answer. */
export type DataOf<
  P extends keyof paths,
  M extends keyof paths[P],
  S extends number = 200,
> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': { data: infer D } } } };
}
  ? D
  : never;

export class ApiError extends Error {
  readonly status: number;
  /** Field name (last segment of the path the API names) -> the API's words for it. */
  readonly fields: Record<string, string>;
  /** For a 429 or 503: when a retry may succeed. */
  readonly retryAt: Date | undefined;

  constructor(status: number, message: string, fields: Record<string, string> = {}, retryAt?: Date) {
    super(message);
    this.status = status;
    this.fields = fields;
    this.retryAt = retryAt;
  }

  /** The sentence shown to the user. */
  describe(): string {
    if (this.status === 401 && session.expired()) return 'Your session has ended: log in again, then retry.';
    if (this.retryAt) {
      const seconds = Math.max(1, Math.ceil((this.retryAt.getTime() - Date.now()) / 1000));
      return `${this.message}. Try again in ${seconds} s (at ${this.retryAt.toLocaleTimeString()}).`;
    }
    return this.message;
  }
}

interface ErrorBody {
  code?: number;
  message?: string;
  data?: { fields?: { field: string; message: string }[]; retry_after?: number } | null;
}

export function toApiError(
  status: number,
  body: ErrorBody | undefined,
  retryAfterHeader: string | null,
): ApiError {
  const fields: Record<string, string> = {};
  for (const problem of body?.data?.fields ?? []) {
    const name = problem.field.split('.').at(-1) ?? problem.field;
    fields[name] ??= problem.message;
  }
  const retrySeconds = Number(body?.data?.retry_after ?? retryAfterHeader ?? Number.NaN);
  const retryAt =
    (status === 429 || status === 503) && Number.isFinite(retrySeconds)
      ? new Date(Date.now() + retrySeconds * 1000)
      : undefined;
  return new ApiError(status, body?.message ?? `Request failed (HTTP ${status})`, fields, retryAt);
}

const authorize: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !request.headers.has('authorization'))
      request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    // A session that the API no longer accepts: ask for a login over the page, keeping what it holds.
    if (response.status === 401 && request.headers.get('authorization') && session.token()) session.expire();
    // An administrator without a second factor where one is required: the shell opens the security page.
    if (response.status === 403 && session.isAdmin()) {
      const body = (await response
        .clone()
        .json()
        .catch(() => null)) as ErrorBody | null;
      if ((body?.data as { second_factor_required?: boolean } | null)?.second_factor_required)
        session.setNeedsSecondFactor(true);
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(authorize);

/** A request's `{id}` path parameter. */
export const byId = (id: string) => ({ params: { path: { id } } });

/** A list's first 100 items, as the console's lists of links, albums, coupons and orders load them. */
export const FIRST_100 = { params: { query: { limit: '100' } } };

/** Unwraps the envelope: its data, or an ApiError with the API's words. */
export async function call<R>(
  request: Promise<{ data?: R; error?: unknown; response: Response }>,
): Promise<R extends { data: infer T } ? T : undefined> {
  let outcome: Awaited<typeof request>;
  try {
    outcome = await request;
  } catch {
    throw new ApiError(0, 'The service cannot be reached; check the connection and retry');
  }
  const { data, error, response } = outcome;
  if (response.ok && data) return (data as { data?: unknown }).data as never;
  throw toApiError(response.status, error as ErrorBody | undefined, response.headers.get('retry-after'));
}
