// Lambda entry of the `files` group: health check, stored files (/i/...), and the 404 for unknown routes.
import { authenticate } from '#lib/auth/authenticate.ts';
import { ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';
import { storedFileResult } from '#lib/upload/serve.ts';
import { uploadServices } from '#lib/upload/services.ts';

export const handler = createGroupHandler(
  'files',
  {
    'GET /healthz': defineRoute({ run: async () => ok({ status: 'ok' }) }),
    // In AWS CloudFront serves /i/* from S3; this answers where the API itself is asked (docs/UPLOADS.md).
    'GET /i/{key+}': defineRoute({
      run: async (request) => storedFileResult(uploadServices().storage, request.params.key ?? ''),
    }),
  },
  { authenticate },
);
