// The files group's compatibility routes (docs/COMPAT.md): Lsky Pro's and Chevereto's upload APIs over the
// one upload service, so their clients (PicGo's Lsky plugins, ShareX's Chevereto uploader) work with an API
// token. Each maps its request's fields and credential onto the house's and answers in the peer's shape.
import {
  cheveretoAnswer,
  lskyV1Data,
  lskyV2Data,
  type Peer,
  peerError,
  peerJson,
} from '#lib/compat/answers.ts';
import { AppError, errors } from '#lib/core/errors.ts';
import type { ParsedUploadForm } from '#lib/files/multipart.ts';
import { html, text } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { quotaAccountOf } from '#lib/http/principal.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import type { FilesDeps } from './deps.ts';

type Request = HttpRequest<unknown, Record<string, string>>;

/**
 * How the API document names a peer's answer: its own JSON (the media type with its charset, so the document
 * tells it from the envelope), with what refusals it may give (401: its token; the upload's own refusals).
 */
const peerAnswer = (shape: string, errors: readonly number[]) => ({
  responseContentType: 'application/json; charset=utf-8',
  responseDescription: `${shape}; errors in the same peer's error shape (docs/COMPAT.md).`,
  errors,
});
const UPLOAD_ERRORS = [401, 404, 415, 429, 451, 507] as const;

/** Any failure in the peer's error shape. */
const answering = async (peer: Peer, work: () => Promise<HttpResult>) => {
  try {
    return await work();
  } catch (error) {
    return peerError(peer, error);
  }
};

/** A multipart upload's body as the upload service reads it (the direct upload route's too). */
export const uploadInput = (request: Pick<Request, 'headers' | 'rawBody'>, fileField?: string) => {
  const declared = Number(request.headers['content-length']);
  return {
    body: request.rawBody,
    contentType: request.headers['content-type'] ?? '',
    contentLength: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
    ...(fileField ? { fileField } : {}),
  };
};

/** Lsky's `permission` (and Lsky Pro+'s `is_public`): 1 public, 0 or none private. */
function lskyPermission(value: string | undefined): 'public' | 'private' {
  const given = value?.trim().toLowerCase() ?? '';
  if (given === '1' || given === 'true' || given === 'public') return 'public';
  if (given === '' || given === '0' || given === 'false' || given === 'private') return 'private';
  throw errors.badRequest('permission: must be 0 (private) or 1 (public)');
}

/** Chevereto's `source` given as base64 or a URL arrives as a text field (or one too long to be one). */
function sourceRefused(error: unknown): never {
  if (error instanceof AppError && /^source: (part is missing|longer than)/.test(error.message))
    throw errors.badRequest(
      'source: send the image as a file part named source; base64 and URL sources are not accepted here',
    );
  throw error;
}

export function compatRoutes(deps: () => FilesDeps) {
  /** The token a peer's client sent, through the same check as the uploader routes' (docs/DESIGN.md 5). */
  const ownerFor = async (request: Request, token: string | undefined) => {
    const credential = token?.trim().replace(/^Bearer\s+/i, '');
    if (!credential) throw errors.unauthorized('Authentication required: send your API token');
    const headers = { ...request.headers, authorization: `Bearer ${credential}` };
    const principal = await deps().authenticate({ ...request, headers }, 'uploader');
    if (!principal) throw errors.unauthorized();
    return quotaAccountOf(principal);
  };

  const lskyUpload = (peer: 'lsky' | 'lsky-v2') =>
    defineRoute({
      summary: `Lsky Pro${peer === 'lsky' ? ' 2 (`/api/v1/upload`)' : '+ (`/api/v2/upload`)'}'s upload: multipart \`file\`, an API token as \`Authorization: Bearer\`; its answer shape (docs/COMPAT.md).`,
      requestContentType: 'multipart/form-data',
      ...peerAnswer(
        peer === 'lsky'
          ? "Lsky Pro's `{status: true, message, data: {key, name, pathname, origin_name, size, mimetype, extension, md5, sha1, links}}`"
          : "Lsky Pro+'s `{status: 'success', message, data: {id, name, …, public_url, thumbnail_url}}`",
        UPLOAD_ERRORS,
      ),
      run: (request) =>
        answering(peer, async () => {
          const owner = await ownerFor(request, request.headers.authorization);
          const uploads = deps().services.directUploads;
          const form = await uploads.parse(uploadInput(request));
          form.fields.permission = lskyPermission(form.fields.permission ?? form.fields.is_public);
          const record = await uploads.store(owner, form);
          return peerJson(
            200,
            peer === 'lsky'
              ? { status: true, message: 'Upload succeeded', data: lskyV1Data(record, form.file.bytes) }
              : { status: 'success', message: 'Upload succeeded', data: lskyV2Data(record, form.file.bytes) },
          );
        }),
    });

  /** The delete link's file, once its signature is checked (a link to no file touches nothing). */
  const linkedFile = async (request: Request) => {
    const { id = '', sig = '' } = request.params;
    const file = await deps().services.files.getAny(id);
    await deps().compatLinks.check(id, sig);
    return file;
  };

  return {
    'POST /compat/lsky/api/v1/upload': lskyUpload('lsky'),
    'POST /compat/lsky/api/v2/upload': lskyUpload('lsky-v2'),
    'DELETE /compat/lsky/api/v1/images/{key}': defineRoute({
      summary:
        "Lsky Pro's delete of one of the caller's images by its key (PicGo's sync delete); an API token as `Authorization: Bearer`.",
      ...peerAnswer('`{status: true, message, data: {}}`', [401, 404]),
      run: (request) =>
        answering('lsky', async () => {
          const owner = await ownerFor(request, request.headers.authorization);
          // One PicGo plugin sends the key as `:<key>`.
          const key = (request.params.key ?? '').replace(/^:/, '');
          // An owner's delete, as the API's: to the trash, restorable for files.trash_days.
          await deps().services.trash.move(owner.id, key);
          return peerJson(200, { status: true, message: 'Deleted', data: {} });
        }),
    }),
    'POST /compat/chevereto/api/1/upload': defineRoute({
      summary:
        "Chevereto's (ImgBB-style) upload: file part `source`, API key as `key` (form or query) or X-API-Key.",
      requestContentType: 'multipart/form-data',
      ...peerAnswer(
        "Chevereto's `{status_code: 200, success, image: {name, extension, size, width, height, date, url, display_url, url_viewer, thumb, medium, delete_url}, status_txt}`",
        UPLOAD_ERRORS,
      ),
      run: (request) =>
        answering('chevereto', async () => {
          const given = request.headers['x-api-key'] ?? request.query.key;
          // A key outside the body is checked before the body is read; one inside it, right after.
          const early = given === undefined ? undefined : await ownerFor(request, given);
          const uploads = deps().services.directUploads;
          const form: ParsedUploadForm = await uploads
            .parse(uploadInput(request, 'source'))
            .catch(sourceRefused);
          const owner = early ?? (await ownerFor(request, form.fields.key));
          // Chevereto's album ids and its `format` are not the house's fields.
          delete form.fields.album_id;
          const record = await uploads.store(owner, form);
          if ((form.fields.format ?? request.query.format) === 'txt') return text(record.url);
          return peerJson(200, cheveretoAnswer(record, await deps().compatLinks.url(record.id)));
        }),
    }),
    'GET /compat/chevereto/delete/{id}/{sig}': defineRoute({
      summary: "Chevereto's delete_url: a page asking to confirm the deletion of the file it names.",
      responseContentType: 'text/html',
      errors: [404],
      run: async (request) => {
        const file = await linkedFile(request);
        const name = file.original_name.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
        return html(
          `<!doctype html><meta charset="utf-8"><title>Delete ${name}?</title><meta name="robots" content="noindex">` +
            `<p>Delete <strong>${name}</strong>? It goes to its owner's trash.</p><form method="post"><button>Delete</button></form>`,
        );
      },
    }),
    'POST /compat/chevereto/delete/{id}/{sig}': defineRoute({
      summary: "Chevereto's delete_url confirmed: deletes the file it names.",
      responseContentType: 'text/html',
      errors: [404],
      run: async (request) => {
        const file = await linkedFile(request);
        await deps().services.trash.move(file.owner_id, file.id);
        return html(
          '<!doctype html><meta charset="utf-8"><title>Deleted</title><p>The file was moved to its owner\'s trash.</p>',
        );
      },
    }),
  };
}
