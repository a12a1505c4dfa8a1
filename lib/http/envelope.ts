// The `{code, message, data}` envelope every JSON response wears (docs/SPEC.md 7, docs/DESIGN.md 4).
import type { Envelope, HttpResult } from './types.ts';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
});

export function ok<T>(data: T, status = 200): HttpResult {
  return { kind: 'json', status, body: { code: 0, message: 'ok', data } satisfies Envelope<T> };
}

export function created<T>(data: T): HttpResult {
  return ok(data, 201);
}

export function failure(status: number, message: string, data: unknown = null): Envelope {
  return { code: status, message, data };
}

export function text(body: string, status = 200, contentType = 'text/plain; charset=utf-8'): HttpResult {
  return { kind: 'raw', status, body, headers: { 'content-type': contentType } };
}

export function html(body: string, status = 200): HttpResult {
  return { kind: 'raw', status, body, headers: { 'content-type': 'text/html; charset=utf-8' }, page: true };
}

/**
 * How long the CDN and browsers may keep an anonymous public page (a gallery page, an open share's page
 * without password or view limit): a share revoked or a file made private leaves them within this.
 */
export const PUBLIC_PAGE_MAX_AGE_SECONDS = 60;

/** The result marked cacheable by anyone for `seconds` (at most PUBLIC_PAGE_MAX_AGE_SECONDS). */
export function publicFor(result: HttpResult, seconds = PUBLIC_PAGE_MAX_AGE_SECONDS): HttpResult {
  const maxAge = Math.max(0, Math.min(PUBLIC_PAGE_MAX_AGE_SECONDS, Math.floor(seconds)));
  return {
    ...result,
    headers: { ...result.headers, 'cache-control': `public, max-age=${maxAge}` },
  } as HttpResult;
}
