// The CloudFront client for the given settings, built once per container on first use: the SDK package is
// loaded then (dynamic import), not at cold start. Only the takedowns worker reaches it
// (lib/platform/cdn/invalidator.ts); no request path does.
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const cloudFrontClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'cloudfront_endpoint'>): (() => Promise<CloudFrontClient>) => {
    let client: Promise<CloudFrontClient> | undefined;
    return () => {
      client ??= import('@aws-sdk/client-cloudfront').then(({ CloudFrontClient }) =>
        captureClient(new CloudFrontClient(clientOptions('cloudfront', aws.region, aws.cloudfront_endpoint))),
      );
      client.catch(() => {
        client = undefined; // a failed load is tried again on the next run
      });
      return client;
    };
  },
);
