// Links on the address the browser used. Locally base_url defaults to http://localhost:PORT, but the console
// is as often opened at http://127.0.0.1:PORT (the address npm start listens on) or, with HOST=0.0.0.0, at
// this machine's name from another one: links built on localhost would be another origin there (blocked by
// the console's `img-src 'self'`) or another machine. So while base_url is a loopback address (nobody set a
// public one), the local server answers links on the Host the request came to. In AWS base_url is the
// CDN's (or the custom domain's) address, which is where the console and images are served, so nothing
// needs rewriting there (README.md "Web console").
import type { ApiResult } from '#lib/http/event.ts';

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
/** A Host header that is a plain name or address with an optional port: nothing else is copied into links. */
const PLAIN_HOST = /^([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;

/**
 * base_url's origin when it is a loopback address of this very server (npm start's default: localhost on
 * PORT), else undefined: links stay as set.
 */
export function loopbackOrigin(baseUrl: string, port: number): string | undefined {
  const url = new URL(baseUrl);
  const here = url.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname) && url.port === String(port);
  return here ? url.origin : undefined;
}

/** The answer with `linkOrigin` (base_url's) replaced by the origin of the Host it was asked at. */
export function followRequestHost(
  result: ApiResult,
  linkOrigin: string,
  host: string | undefined,
): ApiResult {
  if (!host || !PLAIN_HOST.test(host) || `http://${host}` === linkOrigin) return result;
  // Not a longer port that begins the same (localhost:3000 in localhost:30001).
  const pattern = new RegExp(`${linkOrigin.replace(/[.[\]]/g, '\\$&')}(?!\\d)`, 'g');
  const swap = (text: string) => text.replace(pattern, `http://${host}`);
  const headers = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, value]) => [
      name,
      typeof value === 'string' ? swap(value) : value,
    ]),
  );
  const body = result.isBase64Encoded || result.body === undefined ? result.body : swap(result.body);
  return { ...result, headers, ...(body === undefined ? {} : { body }) };
}
