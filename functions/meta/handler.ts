// Lambda entry of the `meta` group: health check, the API document and its page, and the 404 for unknown
// routes. It reaches no resource at all (stored files are the render group's): every route of this group
// takes no credentials.

import { errors } from '#lib/core/errors.ts';
import { html, ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute, type EntryOptions, noCredentials } from '#lib/http/handler.ts';
import { healthView } from '#lib/http/schemas/common.ts';
import { config } from '#lib/platform/config/index.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { needs } from './needs.ts';

// The generated document (npm run openapi), loaded on its first request rather than at cold start.
const apiDocument = () =>
  import('../../docs/openapi.json', { with: { type: 'json' } }).then(
    (loaded) => loaded.default as Record<string, unknown>,
  );

/** The meta group. */
export function createMetaHandler(options: EntryOptions = {}) {
  return createGroupHandler(
    'meta',
    {
      'GET /healthz': defineRoute({
        summary: 'Health check: the ok envelope once the service is ready.',
        response: healthView,
        run: async () => ok({ status: 'ok' }),
      }),
      'GET /api/v1/openapi.json': defineRoute({
        summary: 'This document (OpenAPI 3.1).',
        responseContentType: 'application/json',
        responseDescription: 'The OpenAPI 3.1 document of the service.',
        run: async () => ({
          kind: 'raw',
          status: 200,
          body: JSON.stringify(await apiDocument()),
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'cache-control': 'public, max-age=300',
          },
        }),
      }),
      'GET /docs': defineRoute({
        summary: 'The API reference: this document rendered by Swagger UI, every file from this origin.',
        responseContentType: 'text/html',
        responseDescription: 'An HTML page; its script and style sheets are under /docs/assets/.',
        run: async () => {
          const { DOCS_PAGE_CSP, renderDocsPage } = await import('#lib/http/docs-page.ts');
          const page = html(renderDocsPage(await apiDocument()));
          return { ...page, headers: { ...page.headers, 'content-security-policy': DOCS_PAGE_CSP } };
        },
      }),
      'GET /docs/assets/{name}': defineRoute({
        summary: "One of the reference page's files (its renderer's script and style sheet, and its own).",
        responseContentType: 'text/javascript',
        responseDescription: 'A script or style sheet, gzip-compressed when the client accepts it.',
        errors: [404],
        run: async (request) => {
          const { docsAsset, isDocsAsset } = await import('#lib/http/docs-page.ts');
          const name = request.params.name ?? '';
          if (!isDocsAsset(name)) throw errors.notFound('no such file of the reference page');
          return docsAsset(name, request.headers['accept-encoding']);
        },
      }),
      'GET /docs/guides/{name}': defineRoute({
        summary:
          'One of the guides the reference names (docs/ACCOUNTS.md, UPLOADS.md, PAYMENTS-GUIDE.md), as text.',
        responseContentType: 'text/plain',
        responseDescription: 'The guide as written (Markdown).',
        errors: [404],
        run: async (request) => {
          const { docsGuide, DOCS_GUIDES } = await import('#lib/http/docs-page.ts');
          const name = request.params.name ?? '';
          if (!DOCS_GUIDES.includes(name)) throw errors.notFound('no such guide');
          return docsGuide(name);
        },
      }),
    },
    { authenticate: noCredentials, ...options },
  );
}

export const handler = createMetaHandler({
  frontDoor: groupFrontDoor('meta', needs, config),
  bans: groupBans('meta', needs, config),
});
