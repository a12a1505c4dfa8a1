// Taking paths out of the CDN's cache: CloudFront invalidations in AWS, nothing where no CDN is deployed.
import { randomUUID } from 'node:crypto';
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';

/** Removes cached copies of the given paths (the `/i/<key>` of taken-down files) from the CDN. */
export interface Invalidator {
  invalidate(paths: string[]): Promise<void>;
}

/** Where nothing caches the service's answers (locally, in tests): there is nothing to invalidate. */
export const noInvalidator: Invalidator = {
  invalidate: async () => {},
};

/**
 * One CreateInvalidation per call on the deployed distribution: the takedowns worker's batch, once a
 * minute at most (lib/platform/cdn/takedowns.ts). The client comes from `client()` on the first
 * invalidation, so a run with nothing to send never loads the CloudFront SDK (infra/bundling.ts
 * CLOUDFRONT_SDK, installed beside that worker's bundle only).
 */
export function cloudFrontInvalidator(
  client: () => Promise<CloudFrontClient>,
  distributionId: string,
): Invalidator {
  return {
    async invalidate(paths) {
      if (paths.length === 0) return;
      const [cloudFront, { CreateInvalidationCommand }] = await Promise.all([
        client(),
        import('@aws-sdk/client-cloudfront'),
      ]);
      await cloudFront.send(
        new CreateInvalidationCommand({
          DistributionId: distributionId,
          InvalidationBatch: {
            // CloudFront treats a repeated reference as the same request: every call must be its own.
            CallerReference: randomUUID(),
            Paths: { Quantity: paths.length, Items: paths },
          },
        }),
      );
    },
  };
}
