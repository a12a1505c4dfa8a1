// A container's copy of the bans (docs/ABUSE.md "Bans"): read whole every `abuse.bans.refresh_seconds`,
// never once per request, so no item is read by every request at scale. An end is checked against the
// clock at each request, so a ban ends on time whatever the copy's age.
import type { BlockList } from 'node:net';
import { log } from '#lib/platform/log.ts';
import { type Ban, blockListOf, inForce, listed, type Network, networkOf } from './bans.ts';

/** The ban in force over an address, if any. */
export type BanCheck = (address: string) => Promise<Ban | undefined>;

export interface BanCacheDeps {
  /** The bans in force (lib/accounts/bans.ts Bans.list). */
  read: () => Promise<Ban[]>;
  refreshSeconds: number;
  clock: () => Date;
}

export interface BanCache {
  check: BanCheck;
  /** Reads the list again now (after this container changed it); a read already under way is not reused. */
  refresh: () => Promise<void>;
}

export function banCache({ read, refreshSeconds, clock }: BanCacheDeps): BanCache {
  let entries: Array<{ ban: Ban; list: BlockList }> = [];
  let all = blockListOf([]);
  let nextRead = 0;
  let pending: Promise<void> | undefined;
  const load = () => {
    pending ??= read()
      .then(
        (bans) => {
          const networks = bans.flatMap((ban) => {
            const network = networkOf(ban.cidr);
            return network ? [{ ban, network }] : [];
          });
          entries = networks.map(({ ban, network }) => ({ ban, list: blockListOf([network]) }));
          all = blockListOf(networks.map(({ network }): Network => network));
        },
        // The last list stays in force (none before the first read): a table hiccup fails no request.
        (error: unknown) => log.warn('ban list not refreshed', { error_name: (error as Error)?.name }),
      )
      .finally(() => {
        nextRead = clock().getTime() + refreshSeconds * 1000;
        pending = undefined;
      });
    return pending;
  };
  return {
    check: async (address) => {
      if (clock().getTime() >= nextRead) await load();
      if (!listed(all, address)) return undefined;
      const now = clock();
      return entries.find(({ ban, list }) => inForce(ban, now) && listed(list, address))?.ban;
    },
    refresh: async () => {
      await pending;
      await load();
    },
  };
}
