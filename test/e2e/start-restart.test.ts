// `npm start` as a user runs it: starts its own stand-ins, serves the API, and keeps data across restarts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../support/start-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'service-start-'));
const env = {
  DATA_DIR: dataDir,
  APP_CONFIG: 'infra/config/local.json',
  LOG__LEVEL: 'warn',
  TABLE_NAME: 'service',
};

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function documentClient(endpoint: string) {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    }),
  );
}

describe('npm start', () => {
  it('serves /healthz and keeps the table and master key across a restart', {
    timeout: 120_000,
  }, async () => {
    const first = await startService(env);
    try {
      const health = await fetch(`${first.url}/healthz`);
      expect(await health.json()).toMatchObject({ code: 0, message: 'ok' });
      await documentClient(first.dynamoEndpoint).send(
        new PutCommand({ TableName: 'service', Item: { pk: 'restart#probe', sk: 'x', value: 'kept' } }),
      );
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const keyBefore = readFileSync(join(dataDir, 'master.key'), 'hex');

    const second = await startService(env);
    try {
      const { Item } = await documentClient(second.dynamoEndpoint).send(
        new GetCommand({ TableName: 'service', Key: { pk: 'restart#probe', sk: 'x' } }),
      );
      expect(Item).toMatchObject({ value: 'kept' });
      expect(readFileSync(join(dataDir, 'master.key'), 'hex')).toBe(keyBefore);
    } finally {
      await second.stop();
    }
  });

  it('stops with the config error, naming the key, when the config is bad', { timeout: 60_000 }, async () => {
    await expect(startService({ ...env, PORT: 'eighty' })).rejects.toThrow(/port: .*expected number/);
  });
});
