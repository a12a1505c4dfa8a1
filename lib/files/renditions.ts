// GET /i/<key>?<query>: a rendition, rendered once and stored (docs/IMAGES.md). The query is checked before
// anything is read; then the stored rendition is served when there is one (one wait, as an original), else
// the original is read, rendered and stored (three waits: the stored copy missed, the original, the store).
import { createHash } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { FileStorage, StoredObject } from '#lib/platform/storage/s3.ts';
import { parseStorageKey } from './names.ts';
import { type RenderLimits, renderRendition } from './render.ts';
import {
  acceptClassOf,
  CONTENT_TYPES,
  outputFormatOf,
  parseRenditionQuery,
  type RenditionLimits,
  renderableSourceOfKey,
  renditionKeyOf,
} from './rendition-query.ts';

/** Largest rendition the function returns in its body (6 MB invocation cap, base64 on top). */
export const INLINE_RENDITION_MAX_BYTES = 4 * 1024 * 1024;
/** Lifetime of the presigned GET a larger rendition is answered with (never cached). */
export const RENDITION_REDIRECT_SECONDS = 300;

/**
 * A rendition to answer with: its bytes, or (over INLINE_RENDITION_MAX_BYTES) a short presigned GET of
 * the stored copy. `varyByAccept` for `f=auto`, whose output depends on the Accept header.
 */
export type RenditionAnswer =
  | { kind: 'bytes'; body: Buffer; contentType: string; etag: string; varyByAccept: boolean }
  | { kind: 'redirect'; location: string; varyByAccept: boolean };

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

  async serve(request: RenditionRequest): Promise<RenditionAnswer> {
    const params = parseRenditionQuery(request.query, this.deps.limits);
    if (parseStorageKey(request.key) === undefined) throw errors.notFound('file: not found');
    const source = renderableSourceOfKey(request.key);
    const varyByAccept = params.format === 'auto';
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

    // The stored copy first, alone: serving it (every edge miss of a rendition) costs what serving an
    // original costs, one read. A first render then reads the original and stores its rendition.
    const stored = await this.deps.storage.open(renditionKey);
    if (stored) {
      if (stored.contentLength !== undefined && stored.contentLength > INLINE_RENDITION_MAX_BYTES) {
        stored.body.destroy();
        return this.redirectTo(renditionKey, varyByAccept);
      }
      const body = await bytesOf(stored);
      return {
        kind: 'bytes',
        body,
        contentType: CONTENT_TYPES[output],
        etag: stored.etag ?? etagOf(body),
        varyByAccept,
      };
    }
    const original = await this.deps.storage.open(request.key);
    if (!original) throw errors.notFound('file: not found');
    const rendered = await renderRendition(await bytesOf(original), source, params, output, this.deps.render);
    // The original is looked for again as the rendition is stored (no extra wait): a file deleted while it
    // was rendering had its renditions swept before this one landed, so this one is taken back.
    const [, stillStored] = await Promise.all([
      this.deps.storage.put(renditionKey, rendered.body, rendered.contentType),
      this.deps.storage.exists(request.key),
    ]);
    if (!stillStored) {
      await this.deps.storage.deleteQuietly(renditionKey);
      throw errors.notFound('file: not found');
    }
    if (rendered.body.length > INLINE_RENDITION_MAX_BYTES) return this.redirectTo(renditionKey, varyByAccept);
    return {
      kind: 'bytes',
      body: rendered.body,
      contentType: rendered.contentType,
      etag: etagOf(rendered.body),
      varyByAccept,
    };
  }

  private async redirectTo(renditionKey: string, varyByAccept: boolean): Promise<RenditionAnswer> {
    return {
      kind: 'redirect',
      location: await this.deps.storage.presignGet(renditionKey, RENDITION_REDIRECT_SECONDS),
      varyByAccept,
    };
  }
}
