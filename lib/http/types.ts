// Plain request/response shapes the route implementations see: no Lambda event types beyond lib/http.
import type { Account, Role } from '#lib/accounts/model.ts';
import type { Envelope } from './envelope.ts';

export type { Role };

/** Who is calling, once authentication has run. */
export interface Principal {
  accountId: string;
  role: Role;
  via: 'session' | 'api_token' | 'static_token';
  /** Session id (jti) when `via` is session; token id when `via` is api_token. */
  credentialId?: string;
  /** The account record as read while authenticating, so routes need not read it again. */
  account?: Account;
}

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
