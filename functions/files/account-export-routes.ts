// The owner's export (docs/ACCOUNTS.md "Export"): ask for one, see the latest, and the mailed link, which
// proves itself (an HMAC of the id and its expiry) and answers a 302 to a short presigned GET of the ZIP.
import { errors } from '#lib/core/errors.ts';
import { ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { downloadQuery, exportView, latestExport, noBody } from '#lib/http/schemas/exports.ts';
import type { HttpRequest } from '#lib/http/types.ts';
import type { FilesDeps } from './deps.ts';

function accountOf(request: HttpRequest<unknown, unknown>) {
  const { account } = requirePrincipal(request);
  if (!account) throw errors.unauthorized();
  return account;
}

export function exportRoutes(deps: () => FilesDeps) {
  return {
    'POST /api/v1/account/export': defineRoute({
      summary:
        'Ask for an export of the account: a ZIP of the originals and a JSON of records, albums, shares, orders and security events, built by a worker; the link (24 h) is mailed. One at a time: 409 while one is pending or running.',
      body: noBody,
      response: exportView,
      successStatus: 202,
      errors: [409],
      run: async (request) => ok(await deps().exports.request(accountOf(request)), 202),
    }),
    'GET /api/v1/account/export': defineRoute({
      summary: "The caller's latest export and its state (null when none was asked for)",
      response: latestExport,
      run: async (request) => ok(await deps().exports.latest(accountOf(request))),
    }),
    'GET /api/v1/account/exports/{id}/download': defineRoute({
      summary:
        'The mailed link of an export: a 302 to a short presigned GET of the ZIP. 403 a link not signed by the service, 410 past its 24 hours, 404 once the ZIP is gone.',
      query: downloadQuery,
      successStatus: 302,
      responseDescription: 'A redirect (Cache-Control: no-store) to the ZIP.',
      errors: [403, 404, 410],
      run: async (request) => ({
        kind: 'raw',
        status: 302,
        body: '',
        headers: {
          location: await deps().exports.download(request.params.id ?? '', request.query),
          'cache-control': 'no-store',
        },
      }),
    }),
  };
}
