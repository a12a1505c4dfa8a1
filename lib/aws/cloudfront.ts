// The CloudFront client for the given settings, built once per container.
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { AwsSettings } from '../config/schema.ts';
import { captureClient } from '../observability/tracing.ts';
import { localCredentials, memoByEndpoint } from './local.ts';

export const cloudFrontClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'cloudfront_endpoint'>): CloudFrontClient =>
    captureClient(
      new CloudFrontClient({
        region: aws.region,
        ...(aws.cloudfront_endpoint
          ? { endpoint: aws.cloudfront_endpoint, credentials: localCredentials('cloudfront') }
          : {}),
        maxAttempts: 3,
      }),
    ),
);
