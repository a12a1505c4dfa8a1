// Taking paths out of the CDN's cache: CloudFront invalidations in AWS, nothing where no CDN is deployed.
import { randomUUID } from 'node:crypto';
import { type CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';

/** Removes cached copies of the given paths (e.g. `/i/<key>` of a deleted file) from the CDN. */
export interface Invalidator {
  invalidate(paths: string[]): Promise<void>;
}

/** Where nothing caches the service's answers (locally, in tests): there is nothing to invalidate. */
export const noInvalidator: Invalidator = {
  invalidate: async () => {},
};

/** One CreateInvalidation per call on the deployed distribution. */
export function cloudFrontInvalidator(client: CloudFrontClient, distributionId: string): Invalidator {
  return {
    async invalidate(paths) {
      if (paths.length === 0) return;
      await client.send(
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
