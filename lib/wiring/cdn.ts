// The group's CDN invalidator and the edge's deny-list (need `cdn`).
import { cloudFrontClient, keyValueStoreClient } from '#lib/platform/aws/cloudfront.ts';
import { type EdgeDenyList, noEdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import { cloudFrontInvalidator, type Invalidator, noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import { keyValueStoreDenyList } from '#lib/platform/cdn/kvs-deny-list.ts';
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

/** The KeyValueStore the edge reads when the deployment names one (`cdn.deny_list_arn`), else a no-op. */
export function edgeDenyListOf(resources: GroupResources): EdgeDenyList {
  const { settings } = resources;
  return once(
    resources,
    'cdn',
    () =>
      settings.cdn.deny_list_arn
        ? keyValueStoreDenyList(keyValueStoreClient(settings.aws), settings.cdn.deny_list_arn)
        : noEdgeDenyList,
    'denyList',
  );
}
