// Lambda entry of the `files` group: health check, stored files (/i/...), and the 404 for unknown routes.
import { authenticate } from '#lib/auth/authenticate.ts';
import { ok } from '#lib/http/envelope.ts';
import { createGroupHandler, defineRoute } from '#lib/http/handler.ts';

export const handler = createGroupHandler(
  'files',
  {
    'GET /healthz': defineRoute({ run: async () => ok({ status: 'ok' }) }),
  },
  { authenticate },
);
