// Lambda entry of the `upload` group: direct and presigned uploads, file management, the public gallery
// and API tokens (docs/UPLOADS.md). API tokens and the static upload token authenticate `uploader` routes.

import * as z from 'zod';
import { config } from '#lib/config/index.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import { pageQuery, requirePrincipal } from '#lib/http/paging.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import { PERMISSIONS } from '#lib/upload/record.ts';
import { directUploadBodyLimit } from '#lib/upload/services.ts';
import { type UploadDeps, uploadDeps } from './deps.ts';

const callerOf = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

const presignBody = z.object({
  mime_type: z.string().trim().min(1).max(255),
  size: z.number().int().min(1),
  filename: z.string().max(1024).optional(),
  permission: z.string().max(32).optional(),
});

/** The upload group over the given dependencies (tests build theirs with the same builders). */
export function createUploadHandler(deps: () => UploadDeps, options: { maxUploadBytes: number }) {
  const uploadServices = () => deps().services;
  return createGroupHandler(
    'upload',
    {
      'POST /api/v1/upload': defineRoute({
        maxBodyBytes: directUploadBodyLimit(options.maxUploadBytes),
        run: async (request) => {
          const declared = Number(request.headers['content-length']);
          const record = await uploadServices().uploads.uploadDirect(callerOf(request), {
            body: request.rawBody,
            contentType: request.headers['content-type'] ?? '',
            contentLength: Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined,
          });
          return ok(record);
        },
      }),
      'POST /api/v1/upload/presign': defineRoute({
        body: presignBody,
        run: async (request) => ok(await uploadServices().uploads.presign(callerOf(request), request.body)),
      }),
      'POST /api/v1/upload/confirm': defineRoute({
        body: z.object({ key: z.string().trim().min(1).max(1024) }),
        run: async (request) =>
          ok(await uploadServices().uploads.confirm(callerOf(request), request.body.key)),
      }),
      'GET /api/v1/files': defineRoute({
        query: pageQuery,
        run: async (request) => ok(await uploadServices().files.list(callerOf(request), request.query)),
      }),
      'GET /api/v1/files/{id}': defineRoute({
        run: async (request) => {
          const { files } = uploadServices();
          return ok(files.record(await files.getOwn(callerOf(request), request.params.id ?? '')));
        },
      }),
      'PATCH /api/v1/files/{id}': defineRoute({
        body: z.object({ permission: z.enum(PERMISSIONS) }),
        run: async (request) =>
          ok(
            await uploadServices().files.setPermission(
              callerOf(request),
              request.params.id ?? '',
              request.body.permission,
            ),
          ),
      }),
      'DELETE /api/v1/files/{id}': defineRoute({
        run: async (request) =>
          ok(await uploadServices().uploads.deleteFile(callerOf(request), request.params.id ?? '')),
      }),
      'GET /api/v1/gallery': defineRoute({
        query: pageQuery,
        run: async (request) => ok(await uploadServices().files.gallery(request.query)),
      }),
      'POST /api/v1/tokens': defineRoute({
        body: z.object({ name: z.string().trim().min(1).max(64) }),
        run: async (request) =>
          created(await uploadServices().tokens.create(callerOf(request), request.body.name)),
      }),
      'GET /api/v1/tokens': defineRoute({
        run: async (request) => ok(await uploadServices().tokens.list(callerOf(request))),
      }),
      'DELETE /api/v1/tokens/{id}': defineRoute({
        run: async (request) => {
          const id = request.params.id ?? '';
          await uploadServices().tokens.revoke(callerOf(request), id);
          return ok({ id, revoked: true });
        },
      }),
    },
    { authenticate: (request, kind) => deps().authenticate(request, kind) },
  );
}

export const handler = createUploadHandler(uploadDeps, { maxUploadBytes: config.upload.max_bytes });
