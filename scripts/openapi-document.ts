// The API document from every group's handler (their route implementations ride on the handler).

import type { RouteImpls } from '#lib/http/handler.ts';
import { buildOpenApiDocument } from '#lib/http/openapi.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';

export const API_INFO = {
  title: 'Account, upload and payment service',
  version: '1.0.0',
  description:
    'Accounts and login security, file upload, and orders settled through payment channels. Every JSON answer is the envelope {code, message, data}: code 0 and message "ok" on success, otherwise code equals the HTTP status and message names the field or rule. Guides: docs/ACCOUNTS.md, docs/UPLOADS.md, docs/PAYMENTS-GUIDE.md.',
};

/** Every group's route implementations, as its handler carries them. */
export async function loadGroupRoutes(): Promise<Record<FunctionGroup, RouteImpls>> {
  const [accounts, shares, files, meta, render, payments, callback] = await Promise.all([
    import('#functions/accounts/handler.ts'),
    import('#functions/shares/handler.ts'),
    import('#functions/files/handler.ts'),
    import('#functions/meta/handler.ts'),
    import('#functions/render/handler.ts'),
    import('#functions/payments/handler.ts'),
    import('#functions/payment-callback/handler.ts'),
  ]);
  return {
    accounts: accounts.handler.routes,
    shares: shares.handler.routes,
    files: files.handler.routes,
    meta: meta.handler.routes,
    render: render.handler.routes,
    payments: payments.handler.routes,
    'payment-callback': callback.handler.routes,
  };
}

export async function generateApiDocument(): Promise<Record<string, unknown>> {
  return buildOpenApiDocument(await loadGroupRoutes(), API_INFO);
}
