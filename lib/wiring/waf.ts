// The WAF's IP sets of banned networks (need `wafIpSets`): their ARNs as the deployment sets them, and the
// writer of their lists (lib/platform/aws/waf.ts). CLOUDFRONT-scoped sets are managed in us-east-1.
import { type IpSetWriter, wafClient, wafIpSetWriter } from '#lib/platform/aws/waf.ts';
import { type GroupResources, once } from './resources.ts';

export interface BanIpSets {
  ipv4: string;
  ipv6: string;
}

export function wafIpSetsOf(resources: GroupResources): { sets: BanIpSets | undefined; writer: IpSetWriter } {
  const { waf_ipv4_set_arn: ipv4, waf_ipv6_set_arn: ipv6 } = resources.settings.abuse.bans;
  return once(resources, 'wafIpSets', () => ({
    sets: ipv4 && ipv6 ? { ipv4, ipv6 } : undefined,
    writer: wafIpSetWriter(wafClient('us-east-1')),
  }));
}
