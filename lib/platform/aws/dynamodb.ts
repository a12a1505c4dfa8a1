// The DynamoDB document client for the given settings, built once per container.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { localCredentials, memoByEndpoint } from './local.ts';

export const dynamoClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'dynamodb_endpoint'>): DynamoDBDocumentClient =>
    DynamoDBDocumentClient.from(
      // The document client shares the captured client's middleware stack, so its calls are traced too.
      captureClient(
        new DynamoDBClient({
          region: aws.region,
          ...(aws.dynamodb_endpoint
            ? { endpoint: aws.dynamodb_endpoint, credentials: localCredentials('dynamodb') }
            : {}),
          maxAttempts: 3,
        }),
      ),
      { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } },
    ),
);
