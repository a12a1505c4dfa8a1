// Lambda entry of the `bandwidth` worker: a schedule (every 5 minutes, infra/workers.ts; locally
// infra/local/schedule.ts) runs it. It counts the CDN's log objects not yet counted per owner and month,
// then mails the notices and stops or resumes serving (lib/files/bandwidth-meter.ts, docs/UPLOADS.md
// "Bandwidth"). A failure throws, so Lambda counts the error; what was not counted stays unclaimed and the
// next run counts it.
import type { Context } from 'aws-lambda';
import type { BandwidthRun } from '#lib/files/bandwidth-meter.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type BandwidthWorkerDeps, bandwidthDeps } from './deps.ts';

export type BandwidthHandler = (event: unknown, context: Context) => Promise<BandwidthRun>;

/** The worker over the given dependencies, as one observed invocation (the scheduled event is not read). */
export function createBandwidthHandler(deps: () => BandwidthWorkerDeps): BandwidthHandler {
  return observeInvocation('bandwidth', async () => deps().meter.run());
}

export const handler = createBandwidthHandler(bandwidthDeps);
