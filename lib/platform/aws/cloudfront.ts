// The CloudFront client for the given settings, built once per container on first use: the SDK package is
// loaded then (dynamic import), not at cold start. Only the takedowns worker reaches it
// (lib/platform/cdn/invalidator.ts); no request path does.
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
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

/**
 * The CloudFront KeyValueStore client (the takedowns worker's deny-list, lib/platform/cdn/kvs-deny-list.ts),
 * built once per container on first use. Its API is signed with SigV4A: the JS signer is loaded with it.
 */
export const keyValueStoreClient = /* @__PURE__ */ memoByEndpoint(
  (
    aws: Pick<AwsSettings, 'region' | 'cloudfront_endpoint'>,
  ): (() => Promise<CloudFrontKeyValueStoreClient>) => {
    let client: Promise<CloudFrontKeyValueStoreClient> | undefined;
    return () => {
      client ??= Promise.all([
        import('@aws-sdk/client-cloudfront-keyvaluestore'),
        import('@aws-sdk/signature-v4a'),
      ]).then(([{ CloudFrontKeyValueStoreClient }]) => {
        // A stand-in is asked at its own address (AWS's rules would put the account id in front of its host
        // name), still signed with SigV4A as AWS is.
        const { endpoint, ...options } = clientOptions('cloudfront', aws.region, aws.cloudfront_endpoint);
        const standIn = endpoint && { endpointProvider: () => ({ url: new URL(endpoint) }) };
        return captureClient(new CloudFrontKeyValueStoreClient({ ...options, ...standIn }));
      });
      client.catch(() => {
        client = undefined;
      });
      return client;
    };
  },
);
