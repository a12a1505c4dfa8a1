// The WAF's IP sets of banned networks (docs/DEPLOYMENT.md "WAF"), written by the ban-mirror worker alone.
// A CLOUDFRONT-scoped set lives in us-east-1 (its ARN's `global/ipset/<name>/<id>`); the SDK package is
// loaded on the first run, not at cold start.
import type { WAFV2Client } from '@aws-sdk/client-wafv2';
import { captureClient } from '#lib/platform/observability/tracing.ts';

/** Writes an IP set's whole list of addresses. */
export interface IpSetWriter {
  replace(setArn: string, cidrs: readonly string[]): Promise<void>;
}

/** The set's name and id, from its ARN. */
export function ipSetOf(arn: string): { Name: string; Id: string; Scope: 'CLOUDFRONT' | 'REGIONAL' } {
  const match = /:(global|regional)\/ipset\/([\w-]+)\/([\w-]+)$/.exec(arn);
  if (!match) throw new Error(`not a WAF IP set ARN: ${arn}`);
  return { Name: match[2]!, Id: match[3]!, Scope: match[1] === 'global' ? 'CLOUDFRONT' : 'REGIONAL' };
}

/** The WAF client of the given region, built on first use (the SDK package loaded then). */
export function wafClient(region: string): () => Promise<WAFV2Client> {
  let client: Promise<WAFV2Client> | undefined;
  return () => {
    client ??= import('@aws-sdk/client-wafv2').then(({ WAFV2Client }) =>
      captureClient(new WAFV2Client({ region, maxAttempts: 3 })),
    );
    client.catch(() => {
      client = undefined; // a failed load is tried again on the next run
    });
    return client;
  };
}

/**
 * GetIPSet for its lock token and description, then UpdateIPSet with the whole list (an unchanged list is
 * not written); a lost race (WAFOptimisticLockException: someone wrote it in between) is tried once more
 * with a fresh token.
 */
export function wafIpSetWriter(client: () => Promise<Pick<WAFV2Client, 'send'>>): IpSetWriter {
  const write = async (setArn: string, cidrs: readonly string[]) => {
    const [waf, { GetIPSetCommand, UpdateIPSetCommand }] = await Promise.all([
      client(),
      import('@aws-sdk/client-wafv2'),
    ]);
    const set = ipSetOf(setArn);
    const { IPSet, LockToken } = await waf.send(new GetIPSetCommand(set));
    if ([...(IPSet?.Addresses ?? [])].sort().join() === [...cidrs].sort().join()) return;
    await waf.send(
      new UpdateIPSetCommand({
        ...set,
        Addresses: [...cidrs],
        LockToken,
        ...(IPSet?.Description ? { Description: IPSet.Description } : {}),
      }),
    );
  };
  return {
    replace: (setArn, cidrs) =>
      write(setArn, cidrs).catch((error: unknown) => {
        if ((error as Error)?.name !== 'WAFOptimisticLockException') throw error;
        return write(setArn, cidrs);
      }),
  };
}
