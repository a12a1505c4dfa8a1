// The KMS client for the given settings, built once per container (loaded only by groups that seal).
import { KMSClient } from '@aws-sdk/client-kms';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const kmsClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'kms_endpoint'>): KMSClient =>
    captureClient(new KMSClient(clientOptions('kms', aws.region, aws.kms_endpoint))),
);
