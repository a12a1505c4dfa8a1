// The context the CDK CLI hands the app from cdk.json (its feature flags): every synth in the tests builds with
// it, so the templates they check are the ones `cdk synth` writes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '#infra/bundling.ts';

export const CDK_CONTEXT = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Record<
  string,
  unknown
>;
