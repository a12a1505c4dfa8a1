// Lambda entry of the `files` group: health check, stored files (/i/...), and the 404 for unknown routes.
// Imports only what serving needs (the storage, no upload pipeline, no session checks): every route of
// this group takes no credentials.
import { ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute, noCredentials } from '#lib/http/handler.ts';
import { fileStorage } from '#lib/upload/file-storage.ts';
import { storedFileResult } from '#lib/upload/serve.ts';

export const handler = createGroupHandler(
  'files',
  {
    'GET /healthz': defineRoute({ run: async () => ok({ status: 'ok' }) }),
    // In AWS CloudFront serves /i/* from S3; this answers where the API itself is asked (docs/UPLOADS.md).
    'GET /i/{key+}': defineRoute({
      run: async (request) => storedFileResult(fileStorage(), request.params.key ?? ''),
    }),
  },
  { authenticate: noCredentials },
);
