// The group's master key (need `masterKey`).
import { cachedMasterKey, type MasterKey, openMasterKey } from '#lib/platform/crypto/index.ts';
import { type GroupResources, once } from './resources.ts';

/**
 * The master key as the builders take it: a function opening it on first use. Asking for it is where a
 * missing need shows; a key that fails to open is tried again by the next request.
 */
export function masterKeyOf(resources: GroupResources): () => Promise<MasterKey> {
  return once(resources, 'masterKey', () => cachedMasterKey(() => openMasterKey(resources.settings)));
}
