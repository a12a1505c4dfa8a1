// Plain request/response shapes the route implementations see: no Lambda event types beyond lib/http.
import type { Principal, Role } from '#lib/accounts/model.ts';

/** The `{code, message, data}` envelope every JSON answer wears (docs/SPEC.md 7, lib/http/envelope.ts). */
export interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

export type { Principal, Role };

export interface HttpRequest<Body = unknown, Query = Record<string, string>> {
  routeKey: string;
  method: string;
  /** Decoded path, e.g. `/api/v1/files/abc`. */
  path: string;
  params: Record<string, string>;
  query: Query;
  rawQuery: string;
  /** Header names lower-case; repeated headers joined with commas, as API Gateway does. */
  headers: Record<string, string>;
  cookies: string[];
  /** Parsed and validated JSON for json routes; undefined otherwise. */
  body: Body;
  /** The exact bytes received (base64 already decoded). */
  rawBody: Buffer;
  sourceIp: string;
  userAgent: string;
  requestId: string;
  principal?: Principal;
}

export type HttpResult =
  | { kind: 'json'; status: number; body: Envelope; headers?: Record<string, string> }
  | {
      kind: 'raw';
      status: number;
      body: string | Buffer;
      headers?: Record<string, string>;
      /** HTML pages may be framed by nothing but still get nosniff and no-referrer. */
      page?: boolean;
    };
