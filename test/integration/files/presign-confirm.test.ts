// Presigned upload and confirmation against DynamoDB Local and s3rver: the signed URL, the PUT/confirm
// round trip, idempotence and concurrency, and every failure path (which must leave no object behind).
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFiles } from '#lib/files/build.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { uploadRecordSchema } from '#lib/http/schemas/files.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { gif, jpeg, makePng, notAnImage } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callImage, callUpload, uniquePng, uploadInput } from './helpers.ts';

let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob] = await Promise.all([createTestAccount(), createTestAccount()]);
});

async function presign(account: TestAccount, body: Record<string, unknown>) {
  return callUpload<PresignResult>({
    method: 'POST',
    path: '/api/v1/upload/presign',
    body,
    headers: account.headers,
  });
}

async function confirm(account: TestAccount, key: string) {
  return callUpload<UploadRecord>({
    method: 'POST',
    path: '/api/v1/upload/confirm',
    body: { key },
    headers: account.headers,
  });
}

async function put(grant: PresignResult, bytes: Buffer, headers = grant.headers) {
  return fetch(grant.url, { method: grant.method, body: bytes, headers });
}

describe('POST /api/v1/upload/presign', () => {
  it('answers a presigned PUT to incoming/<key> that signs Content-Type and Content-Length for 15 minutes', async () => {
    const { status, body } = await presign(alice, {
      mime_type: 'image/jpg',
      size: 1234,
      filename: 'dir/holiday.jpg',
    });

    expect(status).toBe(200);
    const grant = body.data;
    expect(grant.method).toBe('PUT');
    expect(grant.key).toMatch(/^\d{4}\/\d{2}\/\d{2}\/[0-9a-f-]{36}-[0-9a-f]{30}\.jpg$/);
    expect(grant.headers).toEqual({ 'Content-Type': 'image/jpeg', 'Content-Length': '1234' });
    const url = new URL(grant.url);
    expect(url.pathname).toBe(`/${config.bucket_name}/${objectKeyOf(`incoming/${grant.key}`)}`);
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';').sort()).toEqual([
      'content-length',
      'content-type',
      'host',
    ]);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect([...url.searchParams.keys()].some((name) => name.toLowerCase().includes('checksum'))).toBe(false);
    const expires = new Date(grant.expires_at).getTime();
    expect(Math.abs(expires - (Date.now() + 15 * 60_000))).toBeLessThan(5_000);
  });

  it('refuses a type that is not allowed (415), a size over presign_max_bytes (413) and bad fields (400)', async () => {
    const text = await presign(alice, { mime_type: 'text/html', size: 10 });
    const big = await presign(alice, { mime_type: 'image/png', size: config.upload.presign_max_bytes + 1 });
    const zero = await presign(alice, { mime_type: 'image/png', size: 0 });
    const noType = await presign(alice, { size: 10 });
    const badPermission = await presign(alice, { mime_type: 'image/png', size: 10, permission: 'world' });

    expect(text.status).toBe(415);
    expect(big.status).toBe(413);
    expect(big.body.data).toEqual({ limit_bytes: config.upload.presign_max_bytes });
    expect(zero.status).toBe(400);
    expect(noType.status).toBe(400);
    expect(noType.body.message).toMatch(/mime_type/);
    expect(badPermission.status).toBe(400);
  });

  it('needs credentials', async () => {
    const { status } = await callUpload({
      method: 'POST',
      path: '/api/v1/upload/presign',
      body: { mime_type: 'image/png', size: 1 },
    });
    expect(status).toBe(401);
  });
});

describe('presign, PUT, confirm', () => {
  it('records the file with every field filled and serves it at its url', async () => {
    // Prepare
    const image = uniquePng(makePng);
    const grant = (
      await presign(alice, {
        mime_type: 'image/png',
        size: image.bytes.length,
        filename: 'C:\\x\\shot.png',
        permission: 'public',
      })
    ).body.data;

    // Act
    const upload = await put(grant, image.bytes);
    const { status, body } = await confirm(alice, grant.key);

    // Assess
    expect(upload.status).toBe(200);
    expect(status).toBe(200);
    const record = uploadRecordSchema.parse(body.data);
    expect(record).toMatchObject({
      key: grant.key,
      url: `${config.base_url}/i/${grant.key}`,
      original_name: 'shot.png',
      filename: grant.key.slice(11),
      permission: 'public',
      size: image.bytes.length,
      mime_type: 'image/png',
      width: image.width,
      height: image.height,
    });
    expect(record.id).toBe(grant.key.slice(11, 47));
    expect(record.hash).toBe(
      (await import('node:crypto')).createHash('sha256').update(image.bytes).digest('hex'),
    );
    const served = await callImage({ path: `/i/${grant.key}` });
    expect(served.statusCode).toBe(200);
    expect(Buffer.from(served.body ?? '', 'base64').equals(image.bytes)).toBe(true);
    // The uploaded object is left to the bucket's lifecycle rule for incoming/, and never served.
    expect((await callImage({ path: `/i/incoming/${grant.key}` })).statusCode).toBe(404);
  });

  it('is idempotent: confirming again answers the same record', async () => {
    const image = uniquePng(makePng);
    const grant = (await presign(alice, { mime_type: 'image/png', size: image.bytes.length })).body.data;
    await put(grant, image.bytes);
    const first = await confirm(alice, grant.key);
    const second = await confirm(alice, grant.key);
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(first.body.data);
  });

  it('gives one record and one stored object for 10 concurrent confirms of one key', async () => {
    const owner = await createTestAccount();
    const image = uniquePng(makePng);
    const grant = (await presign(owner, { mime_type: 'image/png', size: image.bytes.length })).body.data;
    await put(grant, image.bytes);
    const before = new Set(await bucketKeys());

    const results = await Promise.all(Array.from({ length: 10 }, () => confirm(owner, grant.key)));

    expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((result) => result.body.data.id)).size).toBe(1);
    const listing = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: owner.headers,
    });
    expect(listing.body.data.items.map((item) => item.key)).toEqual([grant.key]);
    const after = await bucketKeys();
    expect(after.filter((key) => !before.has(key))).toEqual([grant.key]);
  });

  it('settles onto the existing record when the owner already has the bytes, leaving no extra object', async () => {
    const image = uniquePng(makePng);
    const direct = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes: image.bytes }));
    const grant = (await presign(alice, { mime_type: 'image/png', size: image.bytes.length })).body.data;
    await put(grant, image.bytes);

    const first = await confirm(alice, grant.key);
    const again = await confirm(alice, grant.key);

    expect(first.status).toBe(200);
    expect(first.body.data).toEqual(direct.body.data);
    expect(again.body.data).toEqual(direct.body.data);
    expect(await bucketKeys(grant.key)).toEqual([]);
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
  });

  it('gives one record for 10 concurrent presigned uploads of the same bytes', async () => {
    const owner = await createTestAccount();
    const image = uniquePng(makePng);
    const grants = await Promise.all(
      Array.from(
        { length: 10 },
        async () => (await presign(owner, { mime_type: 'image/png', size: image.bytes.length })).body.data,
      ),
    );
    await Promise.all(grants.map((grant) => put(grant, image.bytes)));
    const before = new Set(await bucketKeys());

    const results = await Promise.all(grants.map((grant) => confirm(owner, grant.key)));

    expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((result) => result.body.data.id)).size).toBe(1);
    const after = await bucketKeys();
    const winner = results[0]!.body.data.key;
    expect(after.filter((key) => !before.has(key))).toEqual([winner]);
    // The duplicates' uploaded objects go; the winner's is left to the lifecycle rule for incoming/.
    for (const grant of grants) {
      if (grant.key !== winner) expect(after).not.toContain(`incoming/${grant.key}`);
    }
  });
});

describe('confirm refuses', () => {
  it("someone else's key, an unknown key and a malformed key with 404", async () => {
    const image = uniquePng(makePng);
    const grant = (await presign(alice, { mime_type: 'image/png', size: image.bytes.length })).body.data;
    await put(grant, image.bytes);

    const stolen = await confirm(bob, grant.key);
    const unknown = await confirm(alice, grant.key.replace(/[0-9a-f]{12}\.png$/, '000000000000.png'));
    const malformed = await confirm(alice, '../../etc/passwd');

    expect([stolen.status, unknown.status, malformed.status]).toEqual([404, 404, 404]);
    // Bob's attempt changed nothing: Alice still confirms, and Bob still cannot see the result.
    const mine = await confirm(alice, grant.key);
    expect(mine.status).toBe(200);
    expect((await confirm(bob, grant.key)).status).toBe(404);
  });

  it('a key whose bytes were not uploaded yet with 400, and keeps the grant usable', async () => {
    const image = uniquePng(makePng);
    const grant = (await presign(alice, { mime_type: 'image/png', size: image.bytes.length })).body.data;

    const early = await confirm(alice, grant.key);
    await put(grant, image.bytes);
    const later = await confirm(alice, grant.key);

    expect(early.status).toBe(400);
    expect(early.body.message).toMatch(/^key: nothing was uploaded yet/);
    expect(later.status).toBe(200);
  });

  it('bytes that are not an image with 415, deleting the object and the grant', async () => {
    const grant = (await presign(alice, { mime_type: 'image/png', size: notAnImage.length })).body.data;
    await put(grant, notAnImage);

    const refused = await confirm(alice, grant.key);
    const again = await confirm(alice, grant.key);

    expect(refused.status).toBe(415);
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
    expect(await bucketKeys(grant.key)).toEqual([]);
    expect(again.status).toBe(404);
  });

  it('an image of another type than declared with 415 (a signed Content-Type is only a header)', async () => {
    const grant = (await presign(alice, { mime_type: 'image/png', size: gif.bytes.length })).body.data;
    await put(grant, gif.bytes);
    const refused = await confirm(alice, grant.key);
    expect(refused.status).toBe(415);
    expect(refused.body.message).toBe('file: content is image/gif but image/png was declared');
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
  });

  it('an object of another size than declared with 400 (the local stand-in does not enforce it)', async () => {
    const grant = (await presign(alice, { mime_type: 'image/jpeg', size: 10 })).body.data;
    // s3rver ignores the signed Content-Length; write the object the way a non-conforming client could.
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(`incoming/${grant.key}`),
        Body: jpeg.bytes,
        ContentType: 'image/jpeg',
      }),
    );

    const refused = await confirm(alice, grant.key);

    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(`file: is ${jpeg.bytes.length} bytes but 10 were declared`);
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
  });

  it('an object over presign_max_bytes with 413', async () => {
    // A service with a small presign limit, so the test needs no 100 MiB object.
    const deps = testDeps();
    const small = buildFiles({
      table: deps.table,
      storage: deps.storage,
      baseUrl: config.base_url,
      limits: { maxBytes: 1024, presignMaxBytes: 64, allowedTypes: ['png'], stripMetadata: true },
      quota: deps.quota,
      listingShards: config.listing_shards,
      cdn: { deletedMaxAgeSeconds: config.cdn.deleted_max_age_seconds },
      trashDays: 30,
      accounts: deps.accounts,
      staticToken: { quotaBytes: 1024, rate: {} },
      likeness: { of: async () => undefined, refuse: async () => {} },
    });
    const grant = await small.presigns.presign(alice.account, { mime_type: 'image/png', size: 60 });
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(`incoming/${grant.key}`),
        Body: Buffer.alloc(200),
        ContentType: 'image/png',
      }),
    );

    await expect(small.confirms.confirm(alice.account, grant.key)).rejects.toMatchObject({
      errorName: 'payload_too_large',
    });
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
  });

  it('an expired grant with 410, deleting its object; s3rver refuses the expired URL', async () => {
    // Prepare: a grant issued 16 minutes ago (the service clock drives both the item and the signature).
    const past = new Date(Date.now() - 16 * 60_000);
    const then = testDeps({ clock: () => past }).uploads;
    const image = uniquePng(makePng);
    const grant = await then.presigns.presign(alice.account, {
      mime_type: 'image/png',
      size: image.bytes.length,
    });
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(`incoming/${grant.key}`),
        Body: image.bytes,
        ContentType: 'image/png',
      }),
    );

    // Act
    const late = await put(grant, image.bytes);
    const refused = await confirm(alice, grant.key);
    const again = await confirm(alice, grant.key);

    // Assess
    expect(late.status).toBe(403);
    expect(refused.status).toBe(410);
    expect(await bucketKeys(`incoming/${grant.key}`)).toEqual([]);
    expect(again.status).toBe(404);
  });
});
