// The files group's tag and find routes (docs/UPLOADS.md "Tags and search"): an owner sets a file's tags;
// an administrator finds any file by its URL, its key or its id. The tag filter and the name search are
// queries of GET /api/v1/files.
import { ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { adminFileRecord, adminFindQuery, tagsBody, uploadRecordSchema } from '#lib/http/schemas/files.ts';
import type { FilesDeps } from './deps.ts';

export function searchRoutes(deps: () => FilesDeps) {
  return {
    'PUT /api/v1/files/{id}/tags': defineRoute({
      summary:
        "Replaces the tags of the caller's file: at most 20, each trimmed and lower-cased, 1 to 32 letters, digits, - or _.",
      body: tagsBody,
      response: uploadRecordSchema,
      errors: [400, 404, 409],
      run: async (request) =>
        ok(
          await deps().services.search.setTags(
            requirePrincipal(request).accountId,
            request.params.id ?? '',
            request.body.tags,
          ),
        ),
    }),
    'GET /api/v1/admin/files/find': defineRoute({
      summary:
        'Finds any file by `ref`: its URL (/i/<key>, with or without a rendition query), a share link of it (/s/<id>), its key or its id (administrators).',
      query: adminFindQuery,
      response: adminFileRecord,
      errors: [400, 404],
      run: async (request) => ok(await deps().services.adminFiles.find(request.query.ref)),
    }),
  };
}
