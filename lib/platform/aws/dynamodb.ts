// The DynamoDB document client for the given settings, built once per container.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const dynamoClient = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 'dynamodb_endpoint'>): DynamoDBDocumentClient =>
    DynamoDBDocumentClient.from(
      // The document client shares the captured client's middleware stack, so its calls are traced too.
      captureClient(new DynamoDBClient(clientOptions('dynamodb', aws.region, aws.dynamodb_endpoint))),
      { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } },
    ),
);
