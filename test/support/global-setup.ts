// Starts DynamoDB Local (in memory) and s3rver once for the whole test run; at the end, scans every
// response and log line the run produced for secrets (secret-scan.ts) and fails the run on any.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynamoLocal } from '#infra/local/dynamodb-local.ts';
import { startS3Local } from '#infra/local/s3-local.ts';
import { formatHits, scanCapture } from './secret-scan.ts';

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
    try {
      secretScan(scratchDir);
    } finally {
      rmSync(scratchDir, { recursive: true, force: true });
    }
  };
}

/**
 * A teardown that throws is only logged by Vitest ("error during close") and the run still exits 0, so a
 * hit sets the exit code instead (checked: `vitest run` then exits 1).
 */
function secretScan(scratchDir: string): void {
  const { hits, responses, logLines, files } = scanCapture(scratchDir);
  if (hits.length === 0) {
    console.info(`Secret scan: clean (${files} test files, ${responses} responses, ${logLines} log lines)`);
    return;
  }
  console.error(`\n${formatHits(hits)}\n`);
  process.exitCode = 1;
}
