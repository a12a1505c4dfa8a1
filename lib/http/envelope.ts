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
