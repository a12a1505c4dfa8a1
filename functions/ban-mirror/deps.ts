// The ban-mirror worker's dependencies, built once per container from its needs and settings.
import type { Bans } from '#lib/accounts/bans.ts';
import type { IpSetWriter } from '#lib/platform/aws/waf.ts';
import { config } from '#lib/platform/config/index.ts';
import { bansOf } from '#lib/wiring/bans.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { type BanIpSets, wafIpSetsOf } from '#lib/wiring/waf.ts';
import { needs } from './needs.ts';

export interface BanMirrorDeps {
  bans: Pick<Bans, 'list'>;
  /** The IP sets' ARNs; undefined where the stack has no web ACL of its own (locally, or infra.web_acl_arn). */
  sets: BanIpSets | undefined;
  writer: IpSetWriter;
  clock: () => Date;
}

export function buildBanMirrorDeps(resources: GroupResources): BanMirrorDeps {
  return {
    bans: bansOf(resources).bans,
    ...wafIpSetsOf(resources),
    clock: resources.clock ?? (() => new Date()),
  };
}

let deps: BanMirrorDeps | undefined;

export function banMirrorDeps(): BanMirrorDeps {
  deps ??= buildBanMirrorDeps(groupResources('ban-mirror', needs, config));
  return deps;
}
