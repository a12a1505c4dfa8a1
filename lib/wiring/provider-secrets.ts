// Where the accounts function reads its sign-in providers' client secrets (need `providerSecrets`): the
// Secrets Manager secret a provider names (`secret_id`, cached for 5 minutes so a rotated value is picked
// up without a redeploy), or, outside production only, the `client_secret` its settings carry.
import type { SignInProviderSettings } from '#lib/platform/config/schema.ts';
import { secretsProviderLoader } from './front-door.ts';
import { type GroupResources, once } from './resources.ts';

const SECRET_CACHE_SECONDS = 300;

export function providerSecretsOf(
  resources: GroupResources,
): (provider: SignInProviderSettings) => Promise<string> {
  const load = once(resources, 'providerSecrets', () => secretsProviderLoader(resources.settings));
  return async (provider) => {
    if (provider.client_secret !== undefined) return provider.client_secret;
    const value = await (await load()).get(provider.secret_id!, { maxAge: SECRET_CACHE_SECONDS });
    if (typeof value !== 'string')
      throw new Error(`auth.providers: secret of ${provider.id} is not a string`);
    return value;
  };
}
