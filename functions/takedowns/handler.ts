// Lambda entry of the `takedowns` worker: a schedule (every minute, infra/workers.ts) runs it; it puts every
// file administrators took down since the last run on the edge's deny-list (the /i/* edge function answers
// 404 for it at once), then sends the oldest paths listed in ONE CDN invalidation (at most
// MAX_TAKEDOWN_PATHS, of which at most MAX_TAKEDOWN_WILDCARD_PATHS `/i/<key>*` wildcards; the rest next
// minute) and deletes what it sent (lib/platform/cdn/takedowns.ts). A run with nothing pending makes no
// request. A failed invalidation or deny-list write throws, so Lambda counts the error; what it could not
// do stays pending and the next minute's run does it.
import type { Context } from 'aws-lambda';
import type { TakedownRun } from '#lib/platform/cdn/takedowns.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type TakedownsDeps, takedownsDeps } from './deps.ts';

export type TakedownsHandler = (event: unknown, context: Context) => Promise<TakedownRun>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createTakedownsHandler(deps: () => TakedownsDeps): TakedownsHandler {
  return observeInvocation('takedowns', async () => {
    const { takedowns, cdn, denyList } = deps();
    return takedowns.send(cdn, denyList);
  });
}

export const handler = createTakedownsHandler(takedownsDeps);
