// Lambda entry of the `takedowns` worker: a schedule (every minute, infra/workers.ts) runs it; it puts every
// file administrators took down since the last run on the edge's deny-list (the /i/* edge function answers
// 404 for it at once), then sends the oldest paths listed in ONE CDN invalidation (at most
// MAX_TAKEDOWN_PATHS, of which at most MAX_TAKEDOWN_WILDCARD_PATHS `/i/<key>*` wildcards; the rest next
// minute) and deletes what it sent (lib/platform/cdn/takedowns.ts). Beside them it copies the owners' rules
// changed since the last run (served or stopped, Referer allow-lists) into the same store
// (lib/files/owner-rules.ts), and the files held for review or released since (lib/moderation/edge-holds.ts),
// after the takedowns, so a held file taken down is on the deny-list before its hold goes. A run with nothing pending makes no
// request. A failed invalidation or deny-list write throws, so Lambda counts the error; what it could not
// do stays pending and the next minute's run does it.
import type { Context } from 'aws-lambda';
import type { TakedownRun } from '#lib/platform/cdn/takedowns.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type TakedownsDeps, takedownsDeps } from './deps.ts';

/** What a run did: the takedowns, and how many owners' rules and holds it copied to the edge. */
export type TakedownsRun = TakedownRun & { rules: number; holds: number };

export type TakedownsHandler = (event: unknown, context: Context) => Promise<TakedownsRun>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createTakedownsHandler(deps: () => TakedownsDeps): TakedownsHandler {
  return observeInvocation('takedowns', async () => {
    const { takedowns, ownerRules, holds, cdn, denyList } = deps();
    const [run, rules] = await Promise.all([takedowns.send(cdn, denyList), ownerRules.sync(denyList)]);
    return { ...run, rules, holds: await holds.sync(denyList) };
  });
}

export const handler = createTakedownsHandler(takedownsDeps);
