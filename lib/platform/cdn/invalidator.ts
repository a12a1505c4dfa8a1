// Taking paths out of the CDN's cache: CloudFront invalidations in AWS, nothing where no CDN is deployed.
import { randomUUID } from 'node:crypto';
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';

/** Removes cached copies of the given paths (e.g. `/i/<key>` of a deleted file) from the CDN. */
export interface Invalidator {
  invalidate(paths: string[]): Promise<void>;
}

/** Where nothing caches the service's answers (locally, in tests): there is nothing to invalidate. */
export const noInvalidator: Invalidator = {
  invalidate: async () => {},
};

/**
 * One CreateInvalidation per call on the deployed distribution. The client comes from `client()` on the
 * first invalidation: the CloudFront SDK is the largest package of the functions that delete files, needed
 * only when one is deleted or replaced, so it stays out of their bundles and their cold starts
 * (infra/bundling.ts CLOUDFRONT_SDK).
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
