// The owner's webhook endpoints (docs/WEBHOOKS.md): at most five, each with a signing secret shown once at
// creation; and each endpoint's latest deliveries with their attempts.
import { created, ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { deletedView } from '#lib/http/schemas/common.ts';
import {
  deliveryList,
  webhookCreateBody,
  webhookCreated,
  webhookList,
  webhookPatchBody,
  webhookView,
} from '#lib/http/schemas/webhooks.ts';
import type { FilesDeps } from './deps.ts';

export function webhookRoutes(deps: () => FilesDeps) {
  const webhooks = () => deps().webhooks;
  return {
    'POST /api/v1/webhooks': defineRoute({
      body: webhookCreateBody,
      summary:
        'Registers a webhook endpoint (at most 5 an account; 409 past them): an https URL and the events it takes. Its signing secret is shown in this answer only.',
      response: webhookCreated,
      successStatus: 201,
      errors: [400, 409],
      run: async (request) =>
        created(await webhooks().endpoints.create(requirePrincipal(request).accountId, request.body)),
    }),
    'GET /api/v1/webhooks': defineRoute({
      summary: "The caller's webhook endpoints (never their secrets).",
      response: webhookList,
      run: async (request) => ok(await webhooks().endpoints.list(requirePrincipal(request).accountId)),
    }),
    'PATCH /api/v1/webhooks/{id}': defineRoute({
      body: webhookPatchBody,
      summary: "Turns a webhook endpoint on or off; a disabled endpoint's pending deliveries are dropped.",
      response: webhookView,
      errors: [404],
      run: async (request) => {
        const { accountId } = requirePrincipal(request);
        const id = request.params.id ?? '';
        return ok(await webhooks().endpoints.setEnabled(accountId, id, request.body.enabled));
      },
    }),
    'DELETE /api/v1/webhooks/{id}': defineRoute({
      summary: 'Deletes a webhook endpoint; its pending deliveries are dropped.',
      response: deletedView,
      errors: [404],
      run: async (request) => {
        const id = request.params.id ?? '';
        await webhooks().endpoints.delete(requirePrincipal(request).accountId, id);
        return ok({ id, deleted: true as const });
      },
    }),
    'GET /api/v1/webhooks/{id}/deliveries': defineRoute({
      summary:
        "The endpoint's latest 20 deliveries, newest first, each with its attempts (status or error, time taken, the answer's first bytes).",
      response: deliveryList,
      errors: [404],
      run: async (request) =>
        ok(await webhooks().deliveries.list(requirePrincipal(request).accountId, request.params.id ?? '')),
    }),
  };
}
