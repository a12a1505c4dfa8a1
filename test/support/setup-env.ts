// Runs before each test file: points the configuration at the shared stand-ins with a table, bucket and
// data folder of the file's own, so files never see each other's data; and records every response and log
// line of the file for the run's secret scan (secret-scan.ts, checked in global-setup's teardown).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, inject } from 'vitest';
import { observeResults } from '#lib/http/handler.ts';
import { configureLogging } from '#lib/platform/log.ts';
import { createContract } from './contract.ts';
import { startSecretCapture } from './secret-scan.ts';

const suffix = randomBytes(5).toString('hex');
process.env.APP_CONFIG = 'test/support/test-config.json';
// Vitest exports Vite's BASE_URL ('/'), which is also this service's base_url override.
process.env.BASE_URL = 'http://localhost:3000';
process.env.AWS__DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
process.env.AWS__S3_ENDPOINT = inject('s3Endpoint');
process.env.TABLE_NAME = `test-${suffix}`;
process.env.BUCKET_NAME = `test-${suffix}`;
process.env.ACCESS_LOG_BUCKET_NAME = `test-${suffix}-logs`;
process.env.DATA_DIR = join(inject('scratchDir'), `data-${suffix}`);
mkdirSync(process.env.DATA_DIR, { recursive: true });

// Quiet by default; a test that reads log lines installs its own sink and level.
configureLogging({ level: 'silent' });

// Every log line (all levels, through a tap that configureLogging does not replace) and every response of
// every group handler in this process. The secrets a test file sets through the environment (static upload
// token, bootstrap password) are recorded last, once the file has set them.
const recordEnvironmentSecrets = startSecretCapture(
  inject('scratchDir'),
  expect.getState().testPath ?? `unknown-${suffix}`,
);
afterAll(() => recordEnvironmentSecrets());
// Registered first, so it runs after the file's own afterAll hooks (which may still read the table).
afterAll(async () => {
  const { dropTestTable } = await import('./stack.ts');
  await dropTestTable();
});

// The contract test (test/support/contract.ts): every answer an end-to-end test receives must match the API
// document. Collected here, asserted once the file's tests ran, naming each mismatch.
const testPath = expect.getState().testPath ?? '';
if (/[\\/]test[\\/]e2e[\\/]/.test(testPath)) {
  const contract = createContract();
  const mismatches: string[] = [];
  observeResults((event, result) => {
    const body =
      result.body === undefined
        ? ''
        : result.isBase64Encoded
          ? Buffer.from(result.body, 'base64').toString('utf8')
          : result.body;
    mismatches.push(
      ...contract.check({
        routeKey: event.routeKey,
        status: result.statusCode ?? 200,
        headers: (result.headers ?? {}) as Record<string, string>,
        body,
      }),
    );
  });
  afterAll(() => {
    expect(mismatches, 'answers that do not match docs/openapi.json').toEqual([]);
  });
}
