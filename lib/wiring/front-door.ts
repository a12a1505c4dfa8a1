// The group's front door (need `frontDoor`): where its functions read the CDN's origin secret.
import { join } from 'node:path';
import type { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import {
  fileOriginSecrets,
  LOCAL_ORIGIN_SECRET_FILE,
  type OriginSecrets,
  type OriginSecretsSource,
  originSecretsOf,
} from '#lib/http/front-door.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { GroupNeeds } from './needs.ts';
import { type GroupResources, groupResources, once } from './resources.ts';

/**
 * The origin secret as the settings place it: Secrets Manager through Powertools Parameters (cached for
 * `front_door.cache_seconds`, so a rotated value is picked up without a redeploy), the local file, or
 * nothing (provider `none`: no CDN in front, nothing checked).
 */
export function frontDoorOf(resources: GroupResources): OriginSecretsSource {
  const { settings } = resources;
  const read = once(resources, 'frontDoor', () => originSecretsReader(settings));
  return async () => read?.();
}

/**
 * The secrets rendition URLs are signed with (docs/IMAGES.md): the origin secret's values, the current one
 * first (a URL signed under the previous one still verifies during a rotation). Without a front door, the
 * local secret file when there is one (the local server keeps it); else none: only presets are served.
 */
export function renditionSecretsOf(resources: GroupResources): () => Promise<readonly string[]> {
  const { settings } = resources;
  const source =
    settings.front_door.provider === 'none'
      ? fileOriginSecrets(
          join(settings.data_dir, LOCAL_ORIGIN_SECRET_FILE),
          settings.front_door.cache_seconds,
        )
      : frontDoorOf(resources);
  return async () => {
    const secrets = await source().catch(() => undefined);
    return secrets ? [secrets.current, ...(secrets.previous !== undefined ? [secrets.previous] : [])] : [];
  };
}

function originSecretsReader(settings: Readonly<AppConfig>): (() => Promise<OriginSecrets>) | undefined {
  const { provider, secret_id: secretId, cache_seconds: maxAge } = settings.front_door;
  if (provider === 'none') return undefined;
  if (provider === 'local')
    return fileOriginSecrets(join(settings.data_dir, LOCAL_ORIGIN_SECRET_FILE), maxAge);
  if (!secretId) throw new Error('front_door.secret_id is required with provider secrets-manager');
  const loadProvider = secretsProviderLoader(settings);
  return async () =>
    originSecretsOf(await (await loadProvider()).get(secretId, { maxAge, transform: 'json' }));
}

/**
 * Powertools' Secrets Manager provider, loaded on the first call, not at import: Powertools Parameters and
 * the Secrets Manager client cost tens of milliseconds to evaluate (docs/PERFORMANCE.md), and the first read
 * waits on the network anyway. A failed load is tried again by the next call.
 */
export function secretsProviderLoader(settings: Readonly<AppConfig>): () => Promise<SecretsProvider> {
  let secrets: Promise<SecretsProvider> | undefined;
  return () => {
    secrets ??= Promise.all([
      import('@aws-lambda-powertools/parameters/secrets'),
      import('#lib/platform/aws/secrets-manager.ts'),
    ]).then(
      ([{ SecretsProvider }, { secretsManagerClient }]) =>
        new SecretsProvider({ awsSdkV3Client: secretsManagerClient(settings.aws) }),
    );
    secrets.catch(() => {
      secrets = undefined;
    });
    return secrets;
  };
}

/**
 * The front door of a group's production handler, resolved on its first request (a group that did not
 * declare the need is answered 500 naming it, as every missing need is).
 */
export function groupFrontDoor(
  group: string,
  needs: GroupNeeds,
  settings: Readonly<AppConfig>,
): OriginSecretsSource {
  let source: OriginSecretsSource | undefined;
  return async () => {
    source ??= frontDoorOf(groupResources(group, needs, settings));
    return source();
  };
}
