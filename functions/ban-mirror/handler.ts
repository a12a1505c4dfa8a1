// Lambda entry of the `ban-mirror` worker: a schedule (every minute, only where the stack has its own web
// ACL: infra/workers.ts) runs it; it writes the bans in force into the WAF's two IP sets, IPv4 networks in
// one and IPv6 in the other (an unchanged set is not written), so the CDN refuses a banned viewer before
// any function runs. A ban that ended leaves the sets on the next run; the functions' own check
// (lib/http/ban-check.ts) ends it on time. A failed write throws, so Lambda counts the error.
import { inForce, networkOf } from '#lib/accounts/bans.ts';
import { observeInvocation } from '#lib/platform/observability/invocation.ts';
import { type BanMirrorDeps, banMirrorDeps } from './deps.ts';

/** What a run wrote: the networks of each set, or `skipped` without sets to write. */
export type BanMirrorRun = { ipv4: string[]; ipv6: string[] } | { skipped: 'no WAF IP sets' };

export function createBanMirrorHandler(deps: () => BanMirrorDeps) {
  return observeInvocation('ban-mirror', async (): Promise<BanMirrorRun> => {
    const { bans, sets, writer, clock } = deps();
    if (!sets) return { skipped: 'no WAF IP sets' };
    const now = clock();
    const networks = (await bans.list()).filter((ban) => inForce(ban, now)).map((ban) => networkOf(ban.cidr));
    // WAF takes every prefix but /0 (a ban of everything the functions' own check still enforces).
    const of = (family: string) => [
      ...new Set(networks.flatMap((n) => (n?.family === family && n.prefix > 0 ? [n.cidr] : []))),
    ];
    const run = { ipv4: of('ipv4'), ipv6: of('ipv6') };
    await Promise.all([writer.replace(sets.ipv4, run.ipv4), writer.replace(sets.ipv6, run.ipv6)]);
    return run;
  });
}

export const handler = createBanMirrorHandler(banMirrorDeps);
