// The Secrets Manager client for the given settings, built once per container (loaded only by groups behind
// the front door, which read the CDN's origin secret through it).
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const secretsManagerClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'secrets_manager_endpoint'>): SecretsManagerClient =>
    captureClient(
      new SecretsManagerClient(clientOptions('secrets-manager', aws.region, aws.secrets_manager_endpoint)),
    ),
);
