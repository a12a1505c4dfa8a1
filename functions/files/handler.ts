// Lambda entry of the `files` group: health check, stored files (/i/...), and the 404 for unknown routes.
// Imports only what serving needs (the storage, no upload pipeline, no session checks): every route of
// this group takes no credentials.
import { ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute, noCredentials } from '#lib/http/handler.ts';

import { storedFileResult } from '#lib/upload/serve.ts';
import { type FilesDeps, filesDeps } from './deps.ts';

/** The files group over the given dependencies. */
export function createFilesHandler(deps: () => FilesDeps) {
  return createGroupHandler(
    'files',
    {
      'GET /healthz': defineRoute({ run: async () => ok({ status: 'ok' }) }),
      // In AWS CloudFront serves /i/* from S3; this answers where the API itself is asked (docs/UPLOADS.md).
      'GET /i/{key+}': defineRoute({
        run: async (request) => storedFileResult(deps().storage, request.params.key ?? ''),
      }),
    },
    { authenticate: noCredentials },
  );
}

export const handler = createFilesHandler(filesDeps);
