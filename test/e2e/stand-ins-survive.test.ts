// `npm start` survives its clients: deleting files while their renditions are being written takes no
// stand-in down, and a stand-in that dies anyway (SIGKILL) is started again on its port with its data,
// the restart logged in one line, while the function processes keep working.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { httpClient } from '#test/support/http-client.ts';
import { buildMultipart, photoJpeg } from '#test/support/images.ts';
import { sesInbox } from '#test/support/mail.ts';
import { signedQuery } from '#test/support/signed-renditions.ts';
import { type StartedService, startService } from '#test/support/start-process.ts';
import type { RunningStack } from '../../scripts/running-stack.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'service-stand-ins-'));
const TOKEN = 'local-dev-upload-token-0000';
let service: StartedService;
const client = httpClient(() => service.url);

beforeAll(async () => {
  service = await startService({
    DATA_DIR: dataDir,
    APP_CONFIG: 'infra/config/local.json',
    PORT: String(await freePort()),
  });
  // The static token's uploads belong to the first administrator, made by the bootstrap at its first login.
  const admin = { username: 'admin', password: 'change-me-admin-1' };
  expect((await client.request('POST', '/admin/auth/login', { body: admin })).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function upload(seed: number): Promise<{ id: string; key: string; url: string }> {
  const form = buildMultipart([
    {
      name: 'file',
      filename: `p${seed}.jpg`,
      contentType: 'image/jpeg',
      data: await photoJpeg(320, 240, seed),
    },
  ]);
  const answer = await client.api('POST', '/api/v1/upload', {
    token: TOKEN,
    body: form.body,
    headers: { 'content-type': form.contentType },
  });
  expect(answer.status, JSON.stringify(answer)).toBe(200);
  return answer.data;
}

/** The pid of npm start's child whose command line matches. */
function childOf(pattern: RegExp): number {
  const line = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(service.pid)], { encoding: 'utf8' })
    .split('\n')
    .find((entry) => pattern.test(entry));
  if (!line) throw new Error(`npm start has no child matching ${pattern}`);
  return Number(line.trim().split(/\s+/)[0]);
}

const restarts = () => service.output().match(/"message":"stand-in restarted".*/g) ?? [];

describe('npm start and its stand-ins', () => {
  it('keeps answering while files are deleted as their renditions are written', {
    timeout: 180_000,
  }, async () => {
    for (let round = 0; round < 3; round++) {
      const files = await Promise.all(Array.from({ length: 6 }, (_, index) => upload(round * 10 + index)));
      const answers = await Promise.all(
        files.flatMap((file) => [
          ...[16, 24, 32, 48, 64, 96, 128, 160].flatMap((width) => [
            client.request('GET', `/i/${file.key}?${signedQuery(file.key, `w=${width}`, dataDir)}`),
            client.request('GET', `/i/${file.key}?${signedQuery(file.key, `w=${width}&f=webp`, dataDir)}`),
          ]),
          new Promise((wait) => setTimeout(wait, 30 * round)).then(() =>
            client.request('DELETE', `/api/v1/files/${file.id}`, { token: TOKEN }),
          ),
        ]),
      );
      // Every request had an answer, and none a server error: the file was there or it was gone.
      expect(answers.filter((answer) => answer.status >= 500).map((answer) => answer.raw)).toEqual([]);
    }
    expect((await client.request('GET', '/healthz')).status).toBe(200);
    const after = await upload(99);
    expect(
      (await client.request('GET', `/i/${after.key}?${signedQuery(after.key, 'w=64', dataDir)}`)).status,
    ).toBe(200);
    expect(restarts()).toEqual([]);
    expect(service.output()).not.toMatch(/ENOENT|Unhandled|uncaught/i);
  });

  it('answers every write and delete racing under one prefix of its S3 stand-in, as S3 does', {
    timeout: 120_000,
  }, async () => {
    // Straight at npm start's s3rver: the rendition writes and prefix deletes above, many times over. Its own
    // store answered some of these 500 (a write into a folder a delete had just removed).
    const stack = JSON.parse(readFileSync(join(dataDir, 'running.json'), 'utf8')) as RunningStack;
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: stack.s3_endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      maxAttempts: 1,
    });
    const Bucket = stack.bucket_name;
    const failures: string[] = [];
    const failed = (error: unknown) => void failures.push(String(error));
    const delay = (ms: number) => new Promise((wait) => setTimeout(wait, ms));
    for (let round = 0; round < 60; round++) {
      const prefix = `derived/race/${round}/`;
      await Promise.all([
        ...Array.from({ length: 40 }, (_, index) =>
          delay(index)
            .then(() =>
              s3.send(new PutObjectCommand({ Bucket, Key: `${prefix}w${index}`, Body: 'x'.repeat(2000) })),
            )
            .catch(failed),
        ),
        ...Array.from({ length: 8 }, (_, index) =>
          delay(index * 5)
            .then(async () => {
              const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: prefix }));
              const Objects = (listed.Contents ?? []).map((object) => ({ Key: object.Key! }));
              if (Objects.length) await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects } }));
            })
            .catch(failed),
        ),
      ]);
    }
    s3.destroy();
    expect(failures.slice(0, 5)).toEqual([]);
    expect(restarts()).toEqual([]);
  });

  it('starts a killed stand-in again with its data, and logs the restart', { timeout: 120_000 }, async () => {
    const kept = await upload(200);
    const address = `kept-${Date.now()}@example.test`;
    expect((await client.request('POST', '/auth/register/code', { body: { email: address } })).status).toBe(
      200,
    );
    const code = await sesInbox(service.inbox).codeFor(address);

    process.kill(childOf(/stand-ins\.ts s3 /), 'SIGKILL');
    process.kill(childOf(/stand-ins\.ts ses /), 'SIGKILL');
    await expect.poll(() => restarts().length, { timeout: 60_000 }).toBe(2);
    for (const stand of ['s3rver', 'SES stand-in']) {
      expect(restarts()).toContainEqual(
        expect.stringContaining(`"stand_in":"${stand}","cause":"signal SIGKILL"`),
      );
    }

    // The same ports and the same data: the running functions and the inbox carry on.
    expect((await client.request('GET', `/i/${kept.key}`)).status).toBe(200);
    expect(await sesInbox(service.inbox).codeFor(address)).toBe(code);
    await upload(201);
    const registered = await client.request('POST', '/auth/register', {
      body: { username: `kept${Date.now() % 1e6}`, email: address, code, password: 'kept password 1' },
    });
    expect(registered.status, registered.raw).toBe(201);
  });
});
