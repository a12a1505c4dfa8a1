// The IAM action and resource of one CloudFront REST-XML request (the API version in the path).

export interface CloudFrontCalls {
  operation: string;
  /** the distribution the request is about */
  distributionId: string;
  calls: Array<{ action: string; resource: string }>;
}

/** The API version the SDK's CloudFront client speaks. */
export const CLOUDFRONT_API_VERSION = '2020-05-31';

const INVALIDATIONS = new RegExp(`^/${CLOUDFRONT_API_VERSION}/distribution/([A-Za-z0-9]+)/invalidation$`);

/** A distribution ARN has no region: CloudFront is global. */
export const distributionArn = (account: string, id: string) =>
  `arn:aws:cloudfront::${account}:distribution/${id}`;

/** Only what the service calls (CreateInvalidation); anything else is not understood and shows as denied. */
export function cloudFrontCalls(
  method: string,
  pathname: string,
  where: { account: string },
): CloudFrontCalls | undefined {
  const distributionId = INVALIDATIONS.exec(pathname)?.[1];
  if (method !== 'POST' || !distributionId) return undefined;
  return {
    operation: 'CreateInvalidation',
    distributionId,
    calls: [
      { action: 'cloudfront:CreateInvalidation', resource: distributionArn(where.account, distributionId) },
    ],
  };
}
