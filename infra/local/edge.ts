// The local server's stand-in for the CDN's /i/* viewer-request function (infra/edge.ts): the same answers
// from the same records, read from the table at once where the edge reads the KeyValueStore the takedowns
// worker fills within minutes. A taken-down key is 404, so is an expiring file's key past the end it carries
// (keyExpired, the function the edge embeds, on the table's clock: docs/UPLOADS.md "Expiring uploads"); a
// file in the trash is 404 because its object has left its key ("Trash"), as on AWS. A held key is 451
// (lib/moderation/edge-holds.ts); an owner's rules and the deployment's Referer allow-list are applied by the
// very function the edge embeds (lib/files/owner-rules.ts).

import { HELD_MESSAGE } from '#lib/files/moderation-state.ts';
import { keyExpired, ownerTagOfKey } from '#lib/files/names.ts';
import {
  edgeRefusal,
  edgeRulesAt,
  planInForce,
  REFUSAL_MESSAGES,
  refererHostOf,
} from '#lib/files/owner-rules.ts';
import type { LocalEdge } from '#lib/http/stored-file.ts';
import { heldAtEdge } from '#lib/moderation/edge-holds.ts';
import { deniedAtEdge } from '#lib/platform/cdn/deny-list.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { planKey } from '#lib/platform/db/keys.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { deploymentEdgeRules } from '../edge.ts';

export function localEdge(table: Table, hotlink: AppConfig['hotlink']): LocalEdge {
  const deployment = deploymentEdgeRules(hotlink);
  return async (key, request) => {
    if (keyExpired(key, table.clock().getTime())) return { status: 404 };
    const tag = ownerTagOfKey(key);
    const [denied, held, rules] = await Promise.all([
      deniedAtEdge(table, key),
      heldAtEdge(table, key),
      tag === undefined ? undefined : edgeRulesAt(table, tag),
    ]);
    if (denied) return { status: 404 };
    if (held) return { status: 451, message: HELD_MESSAGE };
    const host = (request.headers.host ?? '').replace(/:\d+$/, '');
    const refusal = edgeRefusal(rules, deployment, refererHostOf(request.headers.referer), host);
    if (refusal !== undefined) return { status: 403, message: REFUSAL_MESSAGES[refusal] };
    // A marking plan's owner's originals go through the render function, as the edge sends them (`w`).
    const plan = planInForce(rules, Date.now());
    const marks = plan !== undefined && (await table.get(planKey(plan), { consistent: false }))?.watermark;
    return marks ? { status: 'render' } : undefined;
  };
}
