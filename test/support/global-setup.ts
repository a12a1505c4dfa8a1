// Starts DynamoDB Local (in memory) and s3rver once for the whole test run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynamoLocal } from '../../lib/local/dynamodb-local.ts';
import { startS3Local } from '../../lib/local/s3-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
    scratchDir: string;
  }
}

export default async function setup(project: TestProject) {
  const scratchDir = mkdtempSync(join(tmpdir(), 'service-test-'));
  const [dynamo, s3] = await Promise.all([
    startDynamoLocal(),
    startS3Local({ directory: join(scratchDir, 's3') }),
  ]);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('s3Endpoint', s3.endpoint);
  project.provide('scratchDir', scratchDir);
  return async () => {
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    rmSync(scratchDir, { recursive: true, force: true });
  };
}
