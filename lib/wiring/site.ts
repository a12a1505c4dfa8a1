// The operator's site (need `table`): one store a container, read by every page, mail and answer it brands.
import { SiteStore, siteDefaults } from '#lib/platform/site/site.ts';
import { type GroupResources, once } from './resources.ts';
import { tableOf } from './table.ts';

export function siteOf(resources: GroupResources): SiteStore {
  const table = tableOf(resources);
  const name = resources.settings.site.name;
  return once(resources, 'table', () => new SiteStore({ table, seed: () => siteDefaults(name) }), 'site');
}
