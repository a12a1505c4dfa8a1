// The DynamoDB document client of this container, built once on first use.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config/index.ts';
import { localCredentials } from './local.ts';

let client: DynamoDBDocumentClient | undefined;

export function dynamoClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: config.aws.region,
      ...(config.aws.dynamodb_endpoint
        ? { endpoint: config.aws.dynamodb_endpoint, credentials: localCredentials('dynamodb') }
        : {}),
      maxAttempts: 3,
    }),
    { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } },
  );
  return client;
}
