// The files group's moderation routes (docs/MODERATION.md): a file's own bytes for its owner and
// administrators (what the console shows of a held file, which /i/ answers 451 to everyone), the back
// office's queue and reviews, the block list, and the audit log.
import { ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { deletedView } from '#lib/http/schemas/common.ts';
import {
  auditPage,
  auditQuery,
  blockPage,
  moderationQuery,
  queuePage,
  reviewBody,
  reviewResult,
} from '#lib/http/schemas/moderation.ts';
import { storedFileResult } from '#lib/http/stored-file.ts';
import type { FilesDeps } from './deps.ts';

export function moderationRoutes(deps: () => FilesDeps) {
  const moderation = () => deps().moderation;
  return {
    'GET /api/v1/files/{id}/content': defineRoute({
      summary:
        "The file's bytes, for its owner and administrators only, whatever its moderation (a held file's /i/ link answers 451 to everyone); others 404.",
      responseContentType: 'application/octet-stream',
      responseDescription:
        'The bytes (Cache-Control: private, no-store), or a 302 to a short presigned GET for a file over 4 MiB.',
      errors: [404],
      run: async (request) => {
        const { files } = deps().services;
        const { accountId, role } = requirePrincipal(request);
        const id = request.params.id ?? '';
        const file = role === 'admin' ? await files.getAny(id) : await files.getOwn(accountId, id);
        const result = await storedFileResult(deps().storage, file.key);
        return { ...result, headers: { ...result.headers, 'cache-control': 'private, no-store' } };
      },
    }),
    'GET /api/v1/admin/moderation': defineRoute({
      summary:
        'The moderation queue: files held or flagged by the classifier, or reported, oldest first, each with its record, owner and newest reports (administrators).',
      query: moderationQuery,
      response: queuePage,
      run: async (request) => ok(await moderation().queue.list(request.query)),
    }),
    'POST /api/v1/admin/moderation/{id}': defineRoute({
      // The review writes its own event, with what the takedown did (lib/moderation/review.ts).
      audit: 'by-route',
      summary:
        "Reviews a file: `approve` (published for good), `take_down` (deleted, out of the CDN, its likeness refused at upload), or `take_down_and_disable` (also disables the uploader's account, never an administrator's). Each is an audit event (administrators).",
      body: reviewBody,
      response: reviewResult,
      errors: [400, 404],
      run: async (request) => {
        const { accountId } = requirePrincipal(request);
        const reviewer = { id: accountId, from: request.sourceIp };
        return ok(await moderation().reviews.review(reviewer, request.params.id ?? '', request.body.action));
      },
    }),
    'GET /api/v1/admin/blocklist': defineRoute({
      summary: "The block list: taken-down images' perceptual hashes, newest first (administrators).",
      query: moderationQuery,
      response: blockPage,
      run: async (request) => ok(await moderation().blockList.list(request.query)),
    }),
    'DELETE /api/v1/admin/blocklist/{id}': defineRoute({
      summary: 'Removes an entry of the block list: its likeness may be uploaded again (administrators).',
      response: deletedView,
      errors: [404],
      run: async (request) => {
        const id = request.params.id ?? '';
        await moderation().blockList.remove(id);
        return ok({ id, deleted: true });
      },
    }),
    'GET /api/v1/admin/audit': defineRoute({
      summary:
        "Administrators' actions, newest first: who, what, on what, from where, when (administrators).",
      query: auditQuery,
      response: auditPage,
      run: async ({ query }) => ok(await moderation().audit.list(query.page, query.filter)),
    }),
  };
}
