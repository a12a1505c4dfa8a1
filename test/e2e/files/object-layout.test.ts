// Where the bytes of a file live, through the local server: a new file's objects (original, presigned upload,
// renditions) under a two-hex-digit prefix before the date, its key and URL unchanged; served, rendered and
// deleted by its key; and a file stored before the prefixes, at its date-first key, still served
// (docs/UPLOADS.md "Keys and prefixes").
import { createHash, randomUUID } from 'node:crypto';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { newFileItem } from '#lib/files/files.ts';
import { ownerTagOf } from '#lib/files/names.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let user: TestAccount;

beforeAll(async () => {
  user = await createTestAccount();
});

interface FileRecord {
  id: string;
  key: string;
  url: string;
}

function randomPng(): Buffer {
  const channel = () => Math.floor(Math.random() * 256);
  return makePng(16 + Math.floor(Math.random() * 20), 12 + Math.floor(Math.random() * 20), [
    channel(),
    channel(),
    channel(),
  ]);
}

/** The objects S3 holds under `prefix`, as it names them. */
async function objectsUnder(prefix: string): Promise<string[]> {
  const page = await s3Client(config.aws).send(
    new ListObjectsV2Command({ Bucket: config.bucket_name, Prefix: prefix }),
  );
  return (page.Contents ?? []).map((object) => object.Key ?? '');
}

/** The two hex digits a key of the current layout is stored after: the first two of its random part. */
function prefixOf(key: string): string {
  const match = /-([0-9a-f]{2})[0-9a-f]{28}\.png$/.exec(key);
  expect(match, key).not.toBeNull();
  return match![1]!;
}

async function fetched(path: string) {
  const response = await fetch(`${app.url}${path}`);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function directUpload(bytes: Buffer): Promise<FileRecord> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'direct.png');
  const { status, body } = await app.request('POST', '/api/v1/upload', { token: user.token, body: form });
  expect(status).toBe(200);
  return (body as { data: FileRecord }).data;
}

async function presignedUpload(bytes: Buffer): Promise<FileRecord> {
  const grant = await app.request('POST', '/api/v1/upload/presign', {
    token: user.token,
    body: { mime_type: 'image/png', size: bytes.length, filename: 'presigned.png' },
  });
  const { data } = grant.body as {
    data: { key: string; url: string; method: string; headers: Record<string, string> };
  };
  const put = await fetch(data.url, { method: data.method, headers: data.headers, body: bytes });
  expect(put.status).toBe(200);
  // Waiting for its confirm under incoming/, after the same prefix.
  expect(await objectsUnder(`incoming/${prefixOf(data.key)}/${data.key}`)).toEqual([
    `incoming/${prefixOf(data.key)}/${data.key}`,
  ]);
  const confirmed = await app.request('POST', '/api/v1/upload/confirm', {
    token: user.token,
    body: { key: data.key },
  });
  expect(confirmed.status).toBe(200);
  return (confirmed.body as { data: FileRecord }).data;
}

describe('the bucket layout of new files', () => {
  for (const [how, upload] of [
    ['a direct upload', directUpload],
    ['a presigned upload and its confirm', presignedUpload],
  ] as const) {
    it(`stores ${how} after a hash prefix, serves and renders it by its key, and deletes every object`, async () => {
      const bytes = randomPng();
      const record = await upload(bytes);
      const prefix = prefixOf(record.key);

      // The API's key and URL are the date-first ones; the object lives after the prefix, and only there.
      expect(record.key).toMatch(/^\d{4}\/\d{2}\/\d{2}\//);
      expect(new URL(record.url).pathname).toBe(`/i/${record.key}`);
      expect(await objectsUnder(`${prefix}/${record.key}`)).toEqual([`${prefix}/${record.key}`]);
      expect(await objectsUnder(record.key)).toEqual([]);

      const original = await fetched(`/i/${record.key}`);
      expect(original.status).toBe(200);
      expect(original.bytes.equals(bytes)).toBe(true);
      expect((await fetched(`/i/${record.key}?p=thumb`)).status).toBe(200);
      expect(await objectsUnder(`derived/${prefix}/${record.key}/`)).toHaveLength(1);
      expect(await objectsUnder(`derived/${record.key}`)).toEqual([]);

      // Deleted for good: to the trash, then out of it (docs/UPLOADS.md "Trash").
      await app.request('DELETE', `/api/v1/files/${record.id}`, { token: user.token });
      const deleted = await app.request('DELETE', `/api/v1/files/trash/${record.id}`, { token: user.token });
      expect(deleted.status).toBeLessThan(300);
      expect(await objectsUnder(`${prefix}/${record.key}`)).toEqual([]);
      expect(await objectsUnder(`derived/${prefix}/${record.key}/`)).toEqual([]);
      expect((await fetched(`/i/${record.key}`)).status).toBe(404);
    });
  }

  it('spreads new files over prefixes rather than one a day', async () => {
    const records = await Promise.all(Array.from({ length: 12 }, () => directUpload(randomPng())));
    expect(new Set(records.map((record) => prefixOf(record.key))).size).toBeGreaterThan(6);
  });
});

describe('a file stored before the hash prefixes', () => {
  it('is still served and rendered from its date-first key', async () => {
    const bytes = randomPng();
    const id = randomUUID();
    const filename = `${id}-${randomUUID().replaceAll('-', '').slice(0, 12)}${ownerTagOf(user.account.id)}.png`;
    const now = new Date();
    const key = `${now.toISOString().slice(0, 10).replaceAll('-', '/')}/${filename}`;
    await s3Client(config.aws).send(
      new PutObjectCommand({ Bucket: config.bucket_name, Key: key, Body: bytes, ContentType: 'image/png' }),
    );
    const item = newFileItem({
      id,
      key,
      filename,
      facts: {
        sha256: createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
        mimeType: 'image/png',
        ext: 'png',
        kind: 'png',
        width: 1,
        height: 1,
      },
      permission: 'private',
      ownerId: user.account.id,
      ownerRole: 'user',
      now,
      originalName: 'old.png',
      baseUrl: config.base_url,
      listingShards: config.listing_shards,
    });
    await dynamoClient(config.aws).send(new PutCommand({ TableName: config.table_name, Item: item }));

    const listed = await app.request('GET', `/api/v1/files/${id}`, { token: user.token });
    expect((listed.body as { data: FileRecord }).data.key).toBe(key);
    const original = await fetched(`/i/${key}`);
    expect(original.status).toBe(200);
    expect(original.bytes.equals(bytes)).toBe(true);
    expect((await fetched(`/i/${key}?p=thumb`)).status).toBe(200);
    // Its rendition beside it, as before: derived/<key>/, no prefix.
    expect(await objectsUnder(`derived/${key}/`)).toHaveLength(1);
  });
});
