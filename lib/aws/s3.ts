// The S3 client of this container, built once on first use.
import { S3Client } from '@aws-sdk/client-s3';
import { config } from '../config/index.ts';
import { localCredentials } from './local.ts';

let client: S3Client | undefined;

export function s3Client(): S3Client {
  client ??= new S3Client({
    region: config.aws.region,
    // Checksums only when an API requires them: with the newer default, streamed PUTs to s3rver are
    // stored with their aws-chunked framing, and presigned URLs would carry x-amz-checksum-* (LOCAL.md).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(config.aws.s3_endpoint
      ? { endpoint: config.aws.s3_endpoint, forcePathStyle: true, credentials: localCredentials('s3') }
      : {}),
  });
  return client;
}
