// The S3 client for the given settings, built once per container.
import { S3Client } from '@aws-sdk/client-s3';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { captureClient } from '#lib/platform/observability/tracing.ts';
import { clientOptions, memoByEndpoint } from './local.ts';

export const s3Client = /* @__PURE__ */ memoByEndpoint(
  (aws: Pick<AwsSettings, 'region' | 's3_endpoint'>): S3Client =>
    captureClient(
      new S3Client({
        // Checksums only when an API requires them: with the newer default, streamed PUTs to s3rver are
        // stored with their aws-chunked framing, and presigned URLs would carry x-amz-checksum-* (docs/CONTRIBUTING.md).
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...clientOptions('s3', aws.region, aws.s3_endpoint),
        forcePathStyle: Boolean(aws.s3_endpoint),
      }),
    ),
);
