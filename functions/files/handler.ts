// Lambda entry of the `files` group: direct and presigned uploads, file management, the public gallery,
// API tokens and storage usage (docs/UPLOADS.md). API tokens and the static upload token authenticate
// `uploader` routes.

import { clientOf } from '#lib/accounts/client.ts';
import { errors } from '#lib/core/errors.ts';
import { directUploadBodyLimit } from '#lib/files/build.ts';
import { directUploadTooLarge } from '#lib/files/errors.ts';
import { GALLERY_PAGE_MAX } from '#lib/files/files.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { created, ok, publicFor } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute, type EntryOptions } from '#lib/http/handler.ts';
import { quotaAccountOf, requirePrincipal } from '#lib/http/principal.ts';
import { deletedView } from '#lib/http/schemas/common.ts';
import {
  adminFilePage,
  adminFilesQuery,
  albumCreateBody,
  albumPage,
  albumPatchBody,
  albumView,
  confirmBody,
  filePage,
  filePatchBody,
  filesQuery,
  hotlinkRules,
  permissionBody,
  presignBody,
  presignResponse,
  renditionUrlBody,
  renditionUrlResponse,
  tokenCreateBody,
  tokenCreated,
  tokenList,
  tokenRevoked,
  uploadRecordSchema,
  usageResponse,
} from '#lib/http/schemas/files.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import { config } from '#lib/platform/config/index.ts';
import { pageQuery } from '#lib/platform/db/paging.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { exportRoutes } from './account-export-routes.ts';
import { compatRoutes, uploadInput } from './compat-routes.ts';
import { type FilesDeps, filesDeps } from './deps.ts';
import { moderationRoutes } from './moderation-routes.ts';
import { needs } from './needs.ts';
import { searchRoutes } from './search-routes.ts';
import { trashRoutes } from './trash-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';

const callerOf = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

const ownerOf = (request: HttpRequest<unknown, unknown>) => quotaAccountOf(requirePrincipal(request));

/** The files group over the given dependencies (tests build theirs with the same builders). */
export function createFilesHandler(
  deps: () => FilesDeps,
  options: { maxUploadBytes: number } & EntryOptions,
) {
  const uploadServices = () => deps().services;
  return createGroupHandler(
    'files',
    {
      'POST /api/v1/upload': defineRoute({
        maxBodyBytes: directUploadBodyLimit(options.maxUploadBytes),
        // Said as the stream says it: the file limit a user knows (4 MiB), not the body's with its overhead.
        tooLarge: () => directUploadTooLarge(options.maxUploadBytes),
        summary:
          'Direct upload: multipart part `file` (and optional `permission`, `album_id`, `tags` comma-separated). Answers 200, as PicGo expects.',
        requestContentType: 'multipart/form-data',
        response: uploadRecordSchema,
        // Not an allowed type; past the account's upload rate or the static token's; over the storage quota.
        errors: [415, 429, 451, 507],
        run: async (request) =>
          ok(await uploadServices().directUploads.upload(ownerOf(request), uploadInput(request))),
      }),
      'POST /api/v1/upload/presign': defineRoute({
        body: presignBody,
        summary:
          'A presigned PUT for a larger file, to be confirmed once the bytes are stored. Its declared size is held against the quota until the upload is confirmed or the presign expires (507 when there is no room; 429 past the upload rate or 100 presigns not yet confirmed).',
        response: presignResponse,
        errors: [415, 429, 507],
        run: async (request) => ok(await uploadServices().presigns.presign(ownerOf(request), request.body)),
      }),
      'POST /api/v1/upload/confirm': defineRoute({
        body: confirmBody,
        summary: 'Checks a presigned upload and records it (idempotent).',
        response: uploadRecordSchema,
        // 409: the object changed while it was being confirmed (a second PUT); nothing recorded.
        errors: [409, 410, 415, 429, 451, 507],
        run: async (request) =>
          ok(await uploadServices().confirms.confirm(ownerOf(request), request.body.key)),
      }),
      'GET /api/v1/files': defineRoute({
        summary:
          "The caller's files, newest first; `album_id` lists one of the caller's albums, `tag` those with a tag (newest first), `q` those whose name begins with it (by name); one of the three at most.",
        query: filesQuery,
        response: filePage,
        run: async (request) => {
          const { albumId, tag, q, ...page } = request.query;
          const { files, albums, search } = uploadServices();
          if ([albumId, tag, q].filter((given) => given !== undefined).length > 1)
            throw errors.badRequest('query: give one of album_id, tag and q');
          if (tag !== undefined) return ok(await search.byTag(callerOf(request), tag, page));
          if (q !== undefined) return ok(await search.byName(callerOf(request), q, page));
          return ok(
            albumId === undefined
              ? await files.list(ownerOf(request), page)
              : await albums.files(callerOf(request), albumId, page),
          );
        },
      }),
      'GET /api/v1/files/{id}': defineRoute({
        response: uploadRecordSchema,
        run: async (request) => {
          const { files } = uploadServices();
          return ok(await files.recordOf(await files.getOwn(callerOf(request), request.params.id ?? '')));
        },
      }),
      'PATCH /api/v1/files/{id}': defineRoute({
        summary:
          "Sets the permission and/or the album of the caller's file (`album_id` null takes it out of its album).",
        body: filePatchBody,
        response: uploadRecordSchema,
        run: async (request) => {
          const { files, albums } = uploadServices();
          const caller = callerOf(request);
          const id = request.params.id ?? '';
          const { permission, album_id: albumId } = request.body;
          if (permission === undefined && albumId === undefined) {
            throw errors.validation([{ field: 'body', message: 'give permission or album_id' }]);
          }
          let record: UploadRecord | undefined;
          if (albumId !== undefined)
            record = await files.recordOf(await albums.moveFile(caller, id, albumId));
          if (permission !== undefined) record = await files.setPermission(caller, id, permission);
          return ok(record);
        },
      }),
      'POST /api/v1/files/{id}/rendition-url': defineRoute({
        summary:
          'A signed URL of a rendition of the file (w, h, fit, q, f as /i/<key> takes them; docs/IMAGES.md), ' +
          'for its owner and administrators; others 404.',
        body: renditionUrlBody,
        response: renditionUrlResponse,
        errors: [400, 403, 404, 415],
        run: async (request) => {
          const { files } = uploadServices();
          const { accountId, role } = requirePrincipal(request);
          const id = request.params.id ?? '';
          const file = role === 'admin' ? await files.getAny(id) : await files.getOwn(accountId, id);
          const query = new URLSearchParams(
            Object.entries(request.body).map(([name, v]): [string, string] => [name, String(v)]),
          );
          return ok({ url: await deps().renditionUrl(file.key, query) });
        },
      }),
      'GET /api/v1/admin/files': defineRoute({
        summary:
          "Any account's files (`owner_id`), or every file, newest first, each naming its owner (`owner_id`, `owner_username`) (administrators).",
        query: adminFilesQuery,
        response: adminFilePage,
        run: async (request) => ok(await uploadServices().adminFiles.list(request.query)),
      }),
      'PATCH /api/v1/admin/files/{id}': defineRoute({
        summary: "Sets the permission of any account's file (administrators).",
        body: permissionBody,
        response: uploadRecordSchema,
        run: async (request) =>
          ok(
            await uploadServices().files.setPermission(
              null,
              request.params.id ?? '',
              request.body.permission,
            ),
          ),
      }),
      'DELETE /api/v1/admin/files/{id}': defineRoute({
        summary:
          "Deletes any account's file: record, object, and the owner's usage given back (administrators).",
        response: deletedView,
        run: async (request) => ok(await uploadServices().deletions.delete(null, request.params.id ?? '')),
      }),
      'POST /api/v1/albums': defineRoute({
        summary: 'Creates an album (`name` 1 to 100 characters, `description` up to 1,000).',
        body: albumCreateBody,
        response: albumView,
        successStatus: 201,
        run: async (request) =>
          created(await uploadServices().albums.create(callerOf(request), request.body)),
      }),
      'GET /api/v1/albums': defineRoute({
        summary: "The caller's albums, newest first.",
        query: pageQuery,
        response: albumPage,
        run: async (request) => ok(await uploadServices().albums.list(callerOf(request), request.query)),
      }),
      'GET /api/v1/albums/{id}': defineRoute({
        response: albumView,
        run: async (request) =>
          ok(await uploadServices().albums.get(callerOf(request), request.params.id ?? '')),
      }),
      'PATCH /api/v1/albums/{id}': defineRoute({
        summary: 'Renames an album or changes its description.',
        body: albumPatchBody,
        response: albumView,
        run: async (request) =>
          ok(await uploadServices().albums.update(callerOf(request), request.params.id ?? '', request.body)),
      }),
      'DELETE /api/v1/albums/{id}': defineRoute({
        summary: 'Deletes an album; its files stay, outside any album.',
        response: deletedView,
        run: async (request) =>
          ok(await uploadServices().albums.delete(callerOf(request), request.params.id ?? '')),
      }),
      'GET /api/v1/gallery': defineRoute({
        summary: `Public files of everyone, newest first; at most ${GALLERY_PAGE_MAX} a page. Cacheable for a minute.`,
        query: pageQuery,
        response: filePage,
        run: async (request) => publicFor(ok(await uploadServices().files.gallery(request.query))),
      }),
      'POST /api/v1/tokens': defineRoute({
        body: tokenCreateBody,
        summary: 'An API token for an uploader; the secret is shown in this answer only.',
        response: tokenCreated,
        successStatus: 201,
        run: async (request) =>
          created(
            await uploadServices().tokens.create(callerOf(request), request.body.name, clientOf(request)),
          ),
      }),
      'GET /api/v1/usage': defineRoute({
        summary: "The caller's storage: bytes and files used, the quota in force, the plan granting it",
        response: usageResponse,
        run: async (request) => {
          const owner = ownerOf(request);
          const [usage, bandwidth] = await Promise.all([
            uploadServices().quota.usageOf(owner),
            deps().bandwidth.viewOf(owner),
          ]);
          return ok({ ...usage, ...bandwidth });
        },
      }),
      'GET /api/v1/hotlink': defineRoute({
        summary: "The caller's hotlink rules: which sites' pages may show their files",
        response: hotlinkRules,
        run: async (request) => {
          const { referers } = await uploadServices().ownerRules.read(callerOf(request));
          return ok({ hosts: referers?.hosts ?? null, allow_empty: referers?.allow_empty ?? true });
        },
      }),
      'PUT /api/v1/hotlink': defineRoute({
        summary:
          "Sets the caller's hotlink rules (hosts null: any site). The CDN applies them within two minutes.",
        body: hotlinkRules,
        response: hotlinkRules,
        run: async (request) => {
          const { hosts, allow_empty } = request.body;
          await uploadServices().ownerRules.setReferers(
            callerOf(request),
            hosts === null ? undefined : { hosts, allow_empty },
          );
          return ok({ hosts, allow_empty });
        },
      }),
      'GET /api/v1/tokens': defineRoute({
        response: tokenList,
        run: async (request) => ok(await uploadServices().tokens.list(callerOf(request))),
      }),
      'DELETE /api/v1/tokens/{id}': defineRoute({
        response: tokenRevoked,
        run: async (request) => {
          const id = request.params.id ?? '';
          await uploadServices().tokens.revoke(callerOf(request), id, clientOf(request));
          return ok({ id, revoked: true });
        },
      }),
      ...moderationRoutes(deps),
      ...searchRoutes(deps),
      ...trashRoutes(deps),
      ...exportRoutes(deps),
      ...compatRoutes(deps),
      ...webhookRoutes(deps),
    },
    {
      authenticate: (request, kind) => deps().authenticate(request, kind),
      audit: () => deps().moderation.audit,
      frontDoor: options.frontDoor,
      bans: options.bans,
    },
  );
}

export const handler = createFilesHandler(filesDeps, {
  maxUploadBytes: config.upload.max_bytes,
  frontDoor: groupFrontDoor('files', needs, config),
  bans: groupBans('files', needs, config),
});
