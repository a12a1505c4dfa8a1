// Runs before each test file: points the configuration at the shared stand-ins with a table, bucket and
// data folder of the file's own, so files never see each other's data.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { configureLogging } from '../../lib/log.ts';

const suffix = randomBytes(5).toString('hex');
process.env.APP_CONFIG = 'test/support/test-config.json';
// Vitest exports Vite's BASE_URL ('/'), which is also this service's base_url override.
process.env.BASE_URL = 'http://localhost:3000';
process.env.AWS__DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
process.env.AWS__S3_ENDPOINT = inject('s3Endpoint');
process.env.TABLE_NAME = `test-${suffix}`;
process.env.BUCKET_NAME = `test-${suffix}`;
process.env.DATA_DIR = join(inject('scratchDir'), `data-${suffix}`);
mkdirSync(process.env.DATA_DIR, { recursive: true });

// Quiet by default; a test that reads log lines installs its own sink and level.
configureLogging({ level: 'silent' });
