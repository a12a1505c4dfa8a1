// GET /i/<key>?<query>: a rendition, rendered once and stored (docs/IMAGES.md). The query is checked before
// anything is read; then the stored rendition is served when there is one (one wait), else the original is
// read, rendered and stored (three waits: the miss, the original, the store).
import { createHash } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import { parseStorageKey } from '#lib/files/names.ts';
import type { FileStorage, StoredObject } from '#lib/files/storage.ts';
import type { HttpResult } from '#lib/http/types.ts';
import {
  acceptClassOf,
  CONTENT_TYPES,
  outputFormatOf,
  parseRenditionQuery,
  type RenditionLimits,
  renderableSourceOfKey,
  renditionKeyOf,
} from './params.ts';
import { type RenderLimits, renderRendition } from './render.ts';

/** Largest rendition the function returns in its body (6 MB invocation cap, base64 on top). */
export const INLINE_RENDITION_MAX_BYTES = 4 * 1024 * 1024;
/** Lifetime of the presigned GET a larger rendition is answered with (never cached: see the header). */
export const RENDITION_REDIRECT_SECONDS = 300;
/** What a rendition answers with: cached for a year by browsers (the edge caps it, docs/DEPLOYMENT.md). */
export const RENDITION_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface RenditionsDeps {
  storage: FileStorage;
  limits: RenditionLimits;
  render: RenderLimits;
}

export interface RenditionRequest {
  /** The record key, as the path names it (`yyyy/mm/dd/<file>`). */
  key: string;
  query: URLSearchParams;
  /** The viewer's Accept header: `f=auto` picks AVIF or WebP from it. */
  accept: string | undefined;
}

async function bytesOf(object: StoredObject): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of object.body as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** S3's ETag of a single-part object: the MD5 of its bytes, quoted; the same on the first answer and later. */
function etagOf(bytes: Buffer): string {
  return `"${createHash('md5').update(bytes).digest('hex')}"`;
}

export class Renditions {
  constructor(private readonly deps: RenditionsDeps) {}

  async serve(request: RenditionRequest): Promise<HttpResult> {
    const params = parseRenditionQuery(request.query, this.deps.limits);
    if (parseStorageKey(request.key) === undefined) throw errors.notFound('file: not found');
    const source = renderableSourceOfKey(request.key);
    const auto = params.format === 'auto';
    const vary: Record<string, string> = auto ? { vary: 'Accept' } : {};
    if (source === undefined) {
      // Still 404 for a key nobody stored; the type is named only for a file that exists.
      const original = await this.deps.storage.open(request.key);
      if (!original) throw errors.notFound('file: not found');
      original.body.destroy();
      throw errors.unsupportedMediaType(
        `file: ${original.contentType ?? 'this type'} cannot be rendered; request it without a query`,
      );
    }
    const output = outputFormatOf(params, source, acceptClassOf(request.accept));
    const renditionKey = renditionKeyOf(request.key, params, output);

    const stored = await this.deps.storage.open(renditionKey);
    if (stored) {
      if (stored.contentLength !== undefined && stored.contentLength > INLINE_RENDITION_MAX_BYTES) {
        stored.body.destroy();
        return this.redirectTo(renditionKey, vary);
      }
      const body = await bytesOf(stored);
      return this.answer(body, CONTENT_TYPES[output], stored.etag ?? etagOf(body), vary);
    }

    const original = await this.deps.storage.open(request.key);
    if (!original) throw errors.notFound('file: not found');
    const rendered = await renderRendition(await bytesOf(original), source, params, output, this.deps.render);
    await this.deps.storage.put(renditionKey, rendered.body, rendered.contentType);
    if (rendered.body.length > INLINE_RENDITION_MAX_BYTES) return this.redirectTo(renditionKey, vary);
    return this.answer(rendered.body, rendered.contentType, etagOf(rendered.body), vary);
  }

  private answer(body: Buffer, contentType: string, etag: string, vary: Record<string, string>): HttpResult {
    return {
      kind: 'raw',
      status: 200,
      body,
      headers: { 'content-type': contentType, 'cache-control': RENDITION_CACHE_CONTROL, etag, ...vary },
    };
  }

  private async redirectTo(renditionKey: string, vary: Record<string, string>): Promise<HttpResult> {
    return {
      kind: 'raw',
      status: 302,
      body: '',
      headers: {
        location: await this.deps.storage.presignGet(renditionKey, RENDITION_REDIRECT_SECONDS),
        'cache-control': 'no-store',
        ...vary,
      },
    };
  }
}
