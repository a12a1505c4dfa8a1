// The files group's trash routes (docs/UPLOADS.md "Trash"): an owner's DELETE of a file moves it there; the
// owner lists it, restores a file (its URL and shares answer again) or deletes files for good.
import { ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { deletedView } from '#lib/http/schemas/common.ts';
import { trashEmptied, trashPage, uploadRecordSchema } from '#lib/http/schemas/files.ts';
import { pageQuery } from '#lib/platform/db/paging.ts';
import type { FilesDeps } from './deps.ts';

export function trashRoutes(deps: () => FilesDeps) {
  const trash = () => deps().services.trash;
  return {
    'DELETE /api/v1/files/{id}': defineRoute({
      summary: `Moves the caller's file to the trash for files.trash_days (still counted in the usage; served nowhere until restored).`,
      response: deletedView,
      run: async (request) =>
        ok(await trash().move(requirePrincipal(request).accountId, request.params.id ?? '')),
    }),
    'GET /api/v1/files/trash': defineRoute({
      summary: "The caller's trash, most recently deleted first, each with `trashed_at` and `purge_at`.",
      query: pageQuery,
      response: trashPage,
      run: async (request) => ok(await trash().list(requirePrincipal(request).accountId, request.query)),
    }),
    'POST /api/v1/files/{id}/restore': defineRoute({
      summary: 'Restores a file from the trash: its URL, listings and shares answer again.',
      response: uploadRecordSchema,
      run: async (request) =>
        ok(await trash().restore(requirePrincipal(request).accountId, request.params.id ?? '')),
    }),
    'DELETE /api/v1/files/trash/{id}': defineRoute({
      summary:
        'Deletes one file of the trash for good: its bytes, renditions and record; the usage goes down.',
      response: deletedView,
      run: async (request) =>
        ok(await trash().purge(requirePrincipal(request).accountId, request.params.id ?? '')),
    }),
    'DELETE /api/v1/files/trash': defineRoute({
      summary: 'Empties the trash: every file in it deleted for good.',
      response: trashEmptied,
      run: async (request) => ok(await trash().empty(requirePrincipal(request).accountId)),
    }),
  };
}
