// GET /i/<key>?<query>: a rendition, rendered once and stored (docs/IMAGES.md). The query is checked before
// anything is read; then the stored rendition is served when there is one (one wait, as an original), else
// the rendition is claimed while the original is read, rendered in a process of its own and stored (three
// waits: the stored copy missed, the claim beside the original, the store). One render at a time per
// rendition: concurrent requests in this process share it, other instances wait for its stored copy, and a
// refusal is remembered for a while (rendition-claims.ts).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, errors } from '#lib/core/errors.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import type { FileStorage, StoredObject } from '#lib/platform/storage/s3.ts';
import { measureImage } from './measure.ts';
import { parseStorageKey } from './names.ts';
import type { OwnerMark } from './owner-marks.ts';
import type { RenderLimits } from './render.ts';
import type { RenderProcesses } from './render-processes.ts';
import { askedRendition, type Presets, verifyRendition } from './rendition-access.ts';
import type { RenditionClaims } from './rendition-claims.ts';
import {
  acceptClassOf,
  CONTENT_TYPES,
  clampToOriginal,
  DERIVED_PREFIX,
  type OutputFormat,
  outputFormatsOf,
  type RenderableSource,
  type RenditionLimits,
  type RenditionParams,
  renderableSourceOfKey,
  renditionKeyOf,
} from './rendition-query.ts';

/** Largest rendition the function returns in its body (6 MB invocation cap, base64 on top). */
export const INLINE_RENDITION_MAX_BYTES = 4 * 1024 * 1024;
/**
 * A rendition to answer with: its bytes, or (over INLINE_RENDITION_MAX_BYTES) a redirect to the original's
 * own URL, which the CDN serves from the bucket. `varyByAccept` for `f=auto`, whose output depends on the
 * Accept header.
 */
export type RenditionAnswer =
  | { kind: 'bytes'; body: Buffer; contentType: string; etag: string; varyByAccept: boolean }
  | { kind: 'redirect'; location: string; varyByAccept: boolean; presigned?: boolean };

export interface RenditionsDeps {
  storage: FileStorage;
  limits: RenditionLimits;
  /** `images.presets`: what anyone may ask for without a signature. */
  presets: Presets;
  /** The secrets a signed query may be signed with (none: only presets are served). */
  signingSecrets: () => Promise<readonly string[]>;
  render: RenderLimits;
  renderer: RenderProcesses;
  /** Built on the first render (a stored copy's answer never loads the table's client). */
  claims: () => Promise<RenditionClaims>;
  /** `images.render_timeout_seconds`: a claim lasts this and CLAIM_MARGIN_SECONDS more. */
  timeoutSeconds: number;
  /** `images.failure_cache_seconds`: how long a refusal is answered without a render (0: never). */
  failureSeconds: number;
  /** Half `images.derived_ttl_days`: a stored rendition served that is older is stored again. */
  refreshAfterMs: number;
  /** What time it is, for the refresh. */
  clock: Clock;
  /** The mark on the images of the owner of a key (lib/files/owner-marks.ts), or undefined. */
  markOf: (key: string) => Promise<OwnerMark | undefined>;
}

/** What a claim adds to the render's own deadline: reading the original and storing the rendition. */
const CLAIM_MARGIN_SECONDS = 5;
/** A waiting request looks for the stored copy after this, then twice as long each time, up to the most. */
const FIRST_LOOK_MS = 100;
const LONGEST_LOOK_MS = 1000;
/** The quality an original of a marking owner is written at (docs/IMAGES.md "Watermarks"). */
const MARKED_ORIGINAL_QUALITY = 90;
/** Refusals of the image itself, remembered; any other failure (a read, a store) is not. */
const REMEMBERED: ReadonlySet<string> = new Set(['unsupported_media_type', 'unprocessable']);

interface Rendition {
  key: string;
  renditionKey: string;
  source: RenderableSource;
  params: RenditionParams;
  /** The smallest of these is answered (several for `f=auto`). */
  outputs: OutputFormat[];
  varyByAccept: boolean;
  mark: OwnerMark | undefined;
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
  /** Renders in flight in this process, by stored key: a concurrent request for one joins it. */
  private readonly flights = new Map<string, Promise<RenditionAnswer>>();

  constructor(private readonly deps: RenditionsDeps) {}

  /** The rendition of the file at `request.key` its query names: the entry point of every rendition URL. */
  async serve(request: RenditionRequest): Promise<RenditionAnswer> {
    const { params, fallback, signature } = askedRendition(
      request.query,
      this.deps.presets,
      this.deps.limits,
    );
    if (signature !== undefined)
      verifyRendition(await this.deps.signingSecrets(), request.key, params, signature);
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
    const outputs = outputFormatsOf(params, source, acceptClassOf(request.accept), fallback);
    return this.rendition(request.key, source, params, outputs, varyByAccept);
  }

  /**
   * The original of an owner whose plan marks (docs/IMAGES.md "Watermarks"): a rendition at its own size in
   * its own format, marked; undefined when the owner's images carry no mark (the stored bytes are served)
   * or the renderer cannot read the type (BMP, ICO: served as stored).
   */
  async markedOriginal(key: string): Promise<RenditionAnswer | undefined> {
    const source = parseStorageKey(key) && renderableSourceOfKey(key);
    if (!source || (await this.deps.markOf(key)) === undefined) return undefined;
    const params = { fit: 'inside', quality: MARKED_ORIGINAL_QUALITY } as const;
    const answer = await this.rendition(key, source, params, [source], false);
    if (answer.kind === 'bytes') return answer;
    // Too large to answer inline: not to the original's URL (this very answer), to the marked copy itself.
    const renditionKey = renditionKeyOf(key, params, [source], (await this.deps.markOf(key))?.version);
    return { ...answer, location: await this.deps.storage.presignGet(renditionKey, 300), presigned: true };
  }

  private async rendition(
    key: string,
    source: RenderableSource,
    params: RenditionParams,
    outputs: OutputFormat[],
    varyByAccept: boolean,
  ): Promise<RenditionAnswer> {
    const mark = await this.deps.markOf(key);
    const renditionKey = renditionKeyOf(key, params, outputs, mark?.version);
    const inFlight = this.flights.get(renditionKey);
    if (inFlight) return inFlight;

    // The stored copy first, alone: serving it (every edge miss of a rendition) costs what serving an
    // original costs, one read (one per candidate of f=auto). A first render then reads the original and
    // stores its rendition (every candidate).
    const rendition = { key, renditionKey, source, params, outputs, varyByAccept, mark };
    const stored = await this.storedAnswer(rendition);
    if (stored) return stored;
    let flight = this.flights.get(renditionKey);
    if (!flight) {
      flight = this.renderOnce(rendition).finally(() => this.flights.delete(renditionKey));
      this.flights.set(renditionKey, flight);
    }
    return flight;
  }

  /** Where a rendition's copy in `format` is stored. */
  private keyOf(rendition: Rendition, format: OutputFormat): string {
    return renditionKeyOf(rendition.key, rendition.params, format, rendition.mark?.version);
  }

  /** The stored copies of every candidate, the smallest answered; undefined while one is missing. */
  private async storedAnswer(rendition: Rendition): Promise<RenditionAnswer | undefined> {
    const copies = await Promise.all(
      rendition.outputs.map((format) =>
        this.storedCopy(this.keyOf(rendition, format), format, rendition.varyByAccept),
      ),
    );
    const size = (copy: RenditionAnswer) =>
      copy.kind === 'bytes' ? copy.body.length : Number.POSITIVE_INFINITY;
    if (copies.some((copy) => copy === undefined)) return undefined;
    return (copies as RenditionAnswer[]).reduce((smallest, copy) =>
      size(copy) < size(smallest) ? copy : smallest,
    );
  }

  private async storedCopy(
    renditionKey: string,
    output: OutputFormat,
    varyByAccept: boolean,
  ): Promise<RenditionAnswer | undefined> {
    const stored = await this.deps.storage.open(renditionKey);
    if (!stored) return undefined;
    const contentType = CONTENT_TYPES[output];
    if (stored.contentLength !== undefined && stored.contentLength > INLINE_RENDITION_MAX_BYTES) {
      stored.body.destroy();
      return this.redirectTo(renditionKey, varyByAccept);
    }
    const body = await bytesOf(stored);
    // Still requested: stored again (the bytes are at hand), so the lifecycle on derived/, which counts
    // from the stored date, keeps it. A failed refresh is tried by a later request.
    const age = stored.lastModified && this.deps.clock().getTime() - stored.lastModified.getTime();
    if (age !== undefined && age > this.deps.refreshAfterMs)
      await this.deps.storage.put(renditionKey, body, contentType).catch(() => undefined);
    return {
      kind: 'bytes',
      body,
      contentType,
      etag: stored.etag ?? etagOf(body),
      varyByAccept,
    };
  }

  /**
   * The claim taken (beside the original's read) and the rendition rendered; or, while another instance
   * renders it, its stored copy once there; or the refusal remembered for it.
   */
  private async renderOnce(rendition: Rendition): Promise<RenditionAnswer> {
    const claims = await this.deps.claims();
    const claimSeconds = this.deps.timeoutSeconds + CLAIM_MARGIN_SECONDS;
    let [claim, original] = await Promise.all([
      claims.claim(rendition.renditionKey, claimSeconds),
      this.deps.storage.open(rendition.key),
    ]);
    if (!original) {
      // No such file (any more): nothing to render, and no claim left behind for a key nobody stores.
      if (claim.kind === 'won') await claims.release(rendition.renditionKey, claim.owner);
      throw errors.notFound('file: not found');
    }
    const waitUntil = Date.now() + claimSeconds * 1000;
    for (let look = FIRST_LOOK_MS; claim.kind === 'rendering'; look = Math.min(2 * look, LONGEST_LOOK_MS)) {
      original?.body.destroy();
      original = undefined;
      if (Date.now() > waitUntil) {
        throw new AppError('service_unavailable', 'image: still being rendered; try again shortly', {
          retryAfterSeconds: 1,
        });
      }
      await sleep(look);
      const stored = await this.storedAnswer(rendition);
      if (stored) return stored;
      claim = await claims.claim(rendition.renditionKey, claimSeconds);
    }
    if (claim.kind === 'failed') {
      original?.body.destroy();
      throw claim.refusal;
    }
    const { owner } = claim;
    original ??= await this.deps.storage.open(rendition.key);
    if (!original) throw errors.notFound('file: not found');
    try {
      const source = await bytesOf(original);
      const params = clampToOriginal(rendition.params, measureImage(source));
      const renditionKey = renditionKeyOf(rendition.key, params, rendition.outputs, rendition.mark?.version);
      if (renditionKey === rendition.renditionKey) return await this.renderAndStore(rendition, source);
      // At or over the original's size: the one copy of the original's size, stored or made. This URL's
      // own key is never written, so its claim is freed beside the look (no wait of its own); two first
      // renders of that copy at once are possible, and harmless (the same bytes).
      const clamped = { ...rendition, params, renditionKey };
      const [stored] = await Promise.all([
        this.storedAnswer(clamped),
        claims.release(rendition.renditionKey, owner),
      ]);
      return stored ?? (await this.renderAndStore(clamped, source));
    } catch (error) {
      // A refusal of the image is remembered in place of the claim; any other failure frees the claim.
      const remembered = error instanceof AppError && REMEMBERED.has(error.errorName);
      if (remembered && this.deps.failureSeconds > 0)
        await claims.fail(rendition.renditionKey, error, this.deps.failureSeconds);
      else await claims.release(rendition.renditionKey, owner);
      throw error;
    }
  }

  private async renderAndStore(rendition: Rendition, source: Buffer): Promise<RenditionAnswer> {
    const { key, varyByAccept } = rendition;
    const rendered = await this.deps.renderer.render({
      source,
      sourceFormat: rendition.source,
      params: rendition.params,
      output: rendition.outputs,
      limits: this.deps.render,
      mark: rendition.mark?.spec,
    });
    // Every candidate stored under its own format's key (f=auto's choice is made again from them).
    const copies = [rendered, ...(rendered.others ?? [])].map((copy) => ({
      copy,
      at: this.keyOf(rendition, copy.format),
    }));
    const renditionKey = copies[0]!.at;
    // The original is looked for again as the rendition is stored (no extra wait): a file deleted while it
    // was rendering had its renditions swept before this one landed, so this one is taken back.
    const [, stillStored] = await Promise.all([
      Promise.all(copies.map(({ copy, at }) => this.deps.storage.put(at, copy.body, copy.contentType))),
      this.deps.storage.exists(key),
    ]);
    if (!stillStored) {
      await Promise.all(copies.map(({ at }) => this.deps.storage.deleteQuietly(at)));
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

  /** Too large to answer inline: the original's own URL (`derived/<key>/<query>` names it), served from the bucket. */
  private redirectTo(renditionKey: string, varyByAccept: boolean): RenditionAnswer {
    const key = renditionKey.slice(DERIVED_PREFIX.length, renditionKey.lastIndexOf('/'));
    return { kind: 'redirect', location: `/i/${key}`, varyByAccept };
  }
}
