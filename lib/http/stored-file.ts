// GET /i/<key>: the stored bytes to anyone holding the URL. In AWS CloudFront serves them from S3; the
// `files` Lambda answers small objects inline and redirects to a short presigned GET for larger ones; the
// local server streams them straight from storage (serveStoredFileLocally).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { errors } from '#lib/core/errors.ts';
import { parseStorageKey } from '#lib/files/names.ts';
import { renditionQueryOf } from '#lib/files/rendition-query.ts';
import type { RenditionAnswer } from '#lib/files/renditions.ts';
import { type FileStorage, IMMUTABLE_CACHE_CONTROL, type StoredObject } from '#lib/platform/storage/s3.ts';
import { SECURITY_HEADERS } from './envelope.ts';
import type { HttpResult } from './types.ts';

/** Largest object the Lambda returns in its response (6 MB invocation cap, base64 on top). */
export const INLINE_MAX_BYTES = 4 * 1024 * 1024;
/** Lifetime of the presigned GET the Lambda redirects to for larger objects. */
export const REDIRECT_URL_SECONDS = 300;

/** How long a large rendition's redirect to its original is cached (by the CDN and browsers). */
export const LARGE_RENDITION_REDIRECT_SECONDS = 24 * 60 * 60;

/**
 * The policy of every /i/* answer (here and at the CDN, infra/edge.ts), as raw-content hosts send it: the
 * bytes are a user's, so a browser that renders one (an SVG or HTML sniffed past nosniff, a PDF viewer)
 * runs no script, loads nothing and gets an opaque origin, never this service's.
 */
export const RAW_CONTENT_CSP = "default-src 'none'; sandbox";

/** Headers every /i/* answer carries besides its own. */
const RAW_CONTENT_HEADERS = { 'content-security-policy': RAW_CONTENT_CSP } as const;

/**
 * The object of a record key, or undefined. Only keys of the record form (`yyyy/mm/dd/<uuid>-<hex>.<ext>`)
 * are looked up, so nothing under `incoming/` (unconfirmed presigned uploads) is ever served.
 */
export async function openStoredFile(storage: FileStorage, key: string): Promise<StoredObject | undefined> {
  if (parseStorageKey(key) === undefined) return undefined;
  return storage.open(key);
}

function fileHeaders(object: StoredObject): Record<string, string> {
  return {
    'content-type': object.contentType ?? 'application/octet-stream',
    'cache-control': IMMUTABLE_CACHE_CONTROL,
    ...RAW_CONTENT_HEADERS,
    ...(object.etag ? { etag: object.etag } : {}),
    ...(object.lastModified ? { 'last-modified': object.lastModified.toUTCString() } : {}),
  };
}

/** The Lambda answer: the bytes (up to INLINE_MAX_BYTES) or a 302 to a presigned GET; 404 when unknown. */
export async function storedFileResult(storage: FileStorage, key: string): Promise<HttpResult> {
  const object = await openStoredFile(storage, key);
  if (!object) throw errors.notFound('file: not found');
  if (object.contentLength !== undefined && object.contentLength > INLINE_MAX_BYTES) {
    object.body.destroy();
    return {
      kind: 'raw',
      status: 302,
      body: '',
      headers: {
        location: await storage.presignGet(key, REDIRECT_URL_SECONDS),
        'cache-control': 'no-store',
        ...RAW_CONTENT_HEADERS,
      },
    };
  }
  const chunks: Buffer[] = [];
  for await (const chunk of object.body as AsyncIterable<Buffer>) chunks.push(chunk);
  return { kind: 'raw', status: 200, body: Buffer.concat(chunks), headers: fileHeaders(object) };
}

/**
 * A rendition's HTTP answer (docs/IMAGES.md): immutable for a year like the originals, nosniff (the
 * envelope's security headers), `Vary: Accept` only for `f=auto`; a rendition too large to answer inline
 * redirects to its original's URL, cached for a day (no presigned, uncached address).
 */
export function renditionResult(answer: RenditionAnswer): HttpResult {
  const vary: Record<string, string> = answer.varyByAccept ? { vary: 'Accept' } : {};
  if (answer.kind === 'redirect') {
    return {
      kind: 'raw',
      status: 302,
      body: '',
      headers: {
        location: answer.location,
        'cache-control': answer.presigned
          ? 'no-store'
          : `public, max-age=${LARGE_RENDITION_REDIRECT_SECONDS}`,
        ...RAW_CONTENT_HEADERS,
        ...vary,
      },
    };
  }
  return {
    kind: 'raw',
    status: 200,
    body: answer.body,
    headers: {
      'content-type': answer.contentType,
      'cache-control': IMMUTABLE_CACHE_CONTROL,
      etag: answer.etag,
      ...RAW_CONTENT_HEADERS,
      ...vary,
    },
  };
}

function sendNotFound(response: ServerResponse): void {
  const body = JSON.stringify({ code: 404, message: 'file: not found', data: null });
  response.writeHead(404, {
    ...SECURITY_HEADERS,
    ...RAW_CONTENT_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
  });
  response.end(body);
}

function decodePath(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/**
 * What the edge answers instead of a file: 404 (taken down), or 403 with its short page (owner's rules); or
 * `render`: an owner whose plan watermarks, whose originals go through the render function, which marks
 * them (docs/IMAGES.md "Watermarks").
 */
export type EdgeAnswer = { status: 404 } | { status: 403 | 451; message: string } | { status: 'render' };

/** The local server's stand-in for the /i/* edge function (infra/local/edge.ts). */
export type LocalEdge = (key: string, request: IncomingMessage) => Promise<EdgeAnswer | undefined>;

function sendRefused(response: ServerResponse, status: 403 | 451, message: string): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    ...RAW_CONTENT_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(message)),
  });
  response.end(message);
}

/**
 * The local server's `direct` hook: answers GET and HEAD of /i/<key> by streaming from storage, the way
 * CloudFront will in AWS (no size cap, no base64). What `edge` answers for a key (taken down: 404; an owner's
 * rules: 403) is answered instead, renditions included, as the /i/* edge function answers it. Returns false
 * for every other request.
 */
export async function serveStoredFileLocally(
  storage: FileStorage,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  edge: LocalEdge = async () => undefined,
): Promise<boolean> {
  const method = (request.method ?? 'GET').toUpperCase();
  if ((method !== 'GET' && method !== 'HEAD') || !url.pathname.startsWith('/i/')) return false;
  const key = decodePath(url.pathname.slice(3));
  const answer = key === undefined ? undefined : await edge(key, request);
  const refused = answer?.status === 'render' ? undefined : answer;
  // A rendition's parameters ask for a rendition: the render function's, through the route table (as the
  // CDN sends it); any other parameter (`fbclid`) is dropped as the edge drops it: the original.
  if ((renditionQueryOf(url.search.slice(1)).size > 0 || answer?.status === 'render') && !refused)
    return false;
  request.resume();
  if (refused !== undefined && refused.status !== 404) {
    sendRefused(response, refused.status, refused.message);
    return true;
  }
  const object = key === undefined || refused ? undefined : await openStoredFile(storage, key);
  if (!object) {
    sendNotFound(response);
    return true;
  }
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    ...fileHeaders(object),
    ...(object.contentLength !== undefined ? { 'content-length': String(object.contentLength) } : {}),
  });
  if (method === 'HEAD') {
    object.body.destroy();
    response.end();
    return true;
  }
  await pipeline(object.body, response);
  return true;
}
