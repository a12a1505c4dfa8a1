// The group's CDN invalidator (need `cdn`).
import { cloudFrontClient } from '#lib/platform/aws/cloudfront.ts';
import { cloudFrontInvalidator, type Invalidator, noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import { type GroupResources, once } from './resources.ts';

export type { Invalidator };

/** CloudFront when the deployment names a distribution (`cdn.distribution_id`), else a no-op. */
export function cdnOf(resources: GroupResources): Invalidator {
  const { settings } = resources;
  return once(resources, 'cdn', () =>
    settings.cdn.distribution_id
      ? cloudFrontInvalidator(cloudFrontClient(settings.aws), settings.cdn.distribution_id)
      : noInvalidator,
  );
}
