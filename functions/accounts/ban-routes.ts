// The back office's address bans (docs/ABUSE.md "Bans"): create, list, lift. Each change is enforced by this
// container at once and by every other within `abuse.bans.refresh_seconds`.
import type { Bans } from '#lib/accounts/bans.ts';
import { clientOf } from '#lib/accounts/client.ts';
import { created, ok } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { banBody, banList, banView } from '#lib/http/schemas/bans.ts';
import { deletedView } from '#lib/http/schemas/common.ts';

export function banRoutes(bans: () => Bans) {
  return {
    'POST /api/v1/admin/bans': defineRoute({
      summary:
        'Ban an IPv4 or IPv6 address or network (cidr, reason, expires_at or permanent); refused when it ' +
        "covers the caller's own address",
      body: banBody,
      response: banView,
      successStatus: 201,
      run: async (req) =>
        created(await bans().create(req.body, requirePrincipal(req).accountId, clientOf(req).ip)),
    }),
    'GET /api/v1/admin/bans': defineRoute({
      summary: 'The bans in force, with their ends',
      response: banList,
      run: async () => ok({ items: await bans().list() }),
    }),
    'DELETE /api/v1/admin/bans/{id}': defineRoute({
      summary: 'Lift a ban',
      errors: [404],
      response: deletedView,
      run: async (req) => ok(await bans().lift(req.params.id ?? '')),
    }),
  };
}
