// The KMS client of this container, built once on first use.
import { KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config/index.ts';

let client: KMSClient | undefined;

export function kmsClient(): KMSClient {
  client ??= new KMSClient({ region: config.aws.region });
  return client;
}
