// Lambda entry of the `render` group: GET /i/<key>, the stored bytes without a query and a rendition with
// one (docs/IMAGES.md). In AWS the CDN serves query-less requests from the bucket itself and sends only
// renditions here; every route of this group takes no credentials.

import { renditionQueryOf } from '#lib/files/rendition-query.ts';
import { createGroupHandler, defineRoute, type EntryOptions, noCredentials } from '#lib/http/handler.ts';
import { renditionResult, storedFileResult } from '#lib/http/stored-file.ts';
import { config } from '#lib/platform/config/index.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type RenderDeps, renderDeps } from './deps.ts';
import { needs } from './needs.ts';

/** The render group over the given dependencies. */
export function createRenderHandler(deps: () => RenderDeps, options: EntryOptions = {}) {
  return createGroupHandler(
    'render',
    {
      'GET /i/{key+}': defineRoute({
        summary:
          'The stored bytes of a file, or with a preset (p) or a signed query (w, h, fit, q, f, s) a ' +
          'rendition of it, to anyone who holds the URL.',
        responseContentType: 'application/octet-stream',
        responseDescription:
          'The file with the Content-Type of its sniffed type; with a query, the rendition in its output ' +
          'format (p a preset of images.presets with f auto|webp|avif; else w and h from images.widths, fit ' +
          'inside|cover|contain|outside|fill, q from images.qualities, f jpeg|png|webp|avif|auto and s the ' +
          'signature of POST /api/v1/files/{id}/rendition-url; other parameters are ignored; ' +
          'docs/IMAGES.md). 400 names a bad parameter or unknown preset, 403 a missing or wrong signature, ' +
          '415 a source that cannot be rendered, 422 one over the pixel, frame or time limit.',
        errors: [400, 403, 404, 415, 422],
        run: async (request) => {
          const key = request.params.key ?? '';
          // Parameters that are no rendition's (`v`, `fbclid`) are dropped, as the edge drops them.
          const query = renditionQueryOf(request.rawQuery);
          if (query.size === 0) {
            // An owner whose plan marks has the original served marked (docs/IMAGES.md "Watermarks").
            const marked = await deps().renditions.markedOriginal(key);
            return marked ? renditionResult(marked) : storedFileResult(deps().storage, key);
          }
          const answer = await deps().renditions.serve({ key, query, accept: request.headers.accept });
          return renditionResult(answer);
        },
      }),
    },
    { authenticate: noCredentials, ...options },
  );
}

export const handler = createRenderHandler(renderDeps, {
  frontDoor: groupFrontDoor('render', needs, config),
  bans: groupBans('render', needs, config),
});
