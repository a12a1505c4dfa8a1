// The bans as a group reaches them (need `bans`): the `BANS` partition of the table, which its grant holds
// it to (infra/service-function.ts), and the container's cached copy every request is checked against.
import { type BanCache, type BanCheck, banCache } from '#lib/accounts/ban-cache.ts';
import { Bans } from '#lib/accounts/bans.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { Table } from '#lib/platform/db/table.ts';
import type { GroupNeeds } from './needs.ts';
import { type GroupResources, groupResources, once } from './resources.ts';

export interface GroupBans {
  bans: Bans;
  cache: BanCache;
}

/** The bans and this container's copy of them, built once per container. */
export function bansOf(resources: GroupResources): GroupBans {
  const { settings, clock = () => new Date() } = resources;
  return once(resources, 'bans', () => {
    const table = new Table(dynamoClient(settings.aws), settings.table_name, clock);
    let cache: BanCache | undefined;
    const bans = new Bans({ table, clock, changed: () => cache?.refresh() ?? Promise.resolve() });
    cache = banCache({ read: () => bans.list(), refreshSeconds: settings.abuse.bans.refresh_seconds, clock });
    return { bans, cache };
  });
}

/** The check a group's handler runs on every request (lib/http/ban-check.ts). */
export function banCheckOf(resources: GroupResources): BanCheck {
  return (address) => bansOf(resources).cache.check(address);
}

/** The check of a group's production entry, its resources built on the first request. */
export function groupBans(group: string, needs: GroupNeeds, settings: Readonly<AppConfig>): BanCheck {
  let check: BanCheck | undefined;
  return (address) => {
    check ??= banCheckOf(groupResources(group, needs, settings));
    return check(address);
  };
}
