// POST /api/v1/upload through the upload handler against DynamoDB Local and s3rver: the exact record,
// the stored object, type and size rules, and per-owner dedupe under concurrency.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import { uploadRecordSchema } from '#lib/http/schemas/files.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { FileStorage } from '#lib/platform/storage/s3.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { buildMultipart, gif, jpeg, makePng, notAnImage, png, webp } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callUpload, uniquePng, uploadInput } from './helpers.ts';

let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob] = await Promise.all([createTestAccount(), createTestAccount()]);
});

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function storedObject(key: string) {
  const object = await s3Client(config.aws).send(
    new GetObjectCommand({ Bucket: config.bucket_name, Key: objectKeyOf(key) }),
  );
  return {
    bytes: Buffer.from(await object.Body!.transformToByteArray()),
    contentType: object.ContentType,
    cacheControl: object.CacheControl,
  };
}

describe('POST /api/v1/upload', () => {
  it.each([
    ['PNG', png, 'shot.png'],
    ['JPEG', jpeg, 'photo.jpeg'],
    ['GIF', gif, 'anim.gif'],
    ['WebP', webp, 'pic.webp'],
  ])('records a %s with exactly the SPEC 2.3 fields and stores its bytes', async (_, image, name) => {
    // Prepare
    const owner = await createTestAccount();
    const before = Date.now();

    // Act
    const { status, body } = await callUpload<UploadRecord>(
      uploadInput(owner.headers, {
        bytes: image.bytes,
        filename: `C:\\Users\\me\\${name}`,
        contentType: 'application/octet-stream',
      }),
    );

    // Assess
    expect(status).toBe(200);
    expect(body.code).toBe(0);
    expect(body.message).toBe('ok');
    const record = uploadRecordSchema.parse(body.data);
    expect(Object.keys(body.data as object).sort()).toEqual([
      'album_id',
      'created_at',
      'expires_at',
      'filename',
      'hash',
      'height',
      'id',
      'key',
      'mime_type',
      'original_name',
      'permission',
      'size',
      'tags',
      'thumbnail',
      'url',
      'width',
    ]);
    const created = new Date(record.created_at);
    const day = created.toISOString().slice(0, 10).replaceAll('-', '/');
    expect(record.id).toMatch(new RegExp(`^${UUID}$`));
    expect(record.filename).toMatch(new RegExp(`^${record.id}-[0-9a-f]{30}\\.${image.ext}$`));
    expect(record.key).toBe(`${day}/${record.filename}`);
    expect(record.url).toBe(`${config.base_url}/i/${record.key}`);
    expect(record.thumbnail).toBe(`${record.url}?p=thumb`);
    expect(record).toMatchObject({
      original_name: name,
      hash: (await import('node:crypto')).createHash('sha256').update(image.bytes).digest('hex'),
      permission: 'private',
      size: image.bytes.length,
      mime_type: image.mime,
      width: image.width,
      height: image.height,
    });
    expect(record.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    expect(created.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    const stored = await storedObject(record.key);
    expect(stored.bytes.equals(image.bytes)).toBe(true);
    expect(stored.contentType).toBe(image.mime);
    expect(stored.cacheControl).toBe('public, max-age=31536000, immutable');
  });

  it('takes the permission form field', async () => {
    const { bytes } = uniquePng(makePng);
    const { status, body } = await callUpload<UploadRecord>(
      uploadInput(alice.headers, { bytes }, [{ name: 'permission', data: 'public' }]),
    );
    expect(status).toBe(200);
    expect(body.data.permission).toBe('public');
  });

  it('refuses an unknown permission with 400 naming the field', async () => {
    const { bytes } = uniquePng(makePng);
    const { status, body } = await callUpload(
      uploadInput(alice.headers, { bytes }, [{ name: 'permission', data: 'secret' }]),
    );
    expect(status).toBe(400);
    expect(body.message).toMatch(/^permission:/);
  });

  it('answers 415 for a text file named .png and typed image/png, and stores nothing', async () => {
    const before = await bucketKeys();
    const { status, body } = await callUpload(
      uploadInput(alice.headers, { bytes: notAnImage, filename: 'evil.png', contentType: 'image/png' }),
    );
    expect(status).toBe(415);
    expect(body).toMatchObject({ code: 415, data: null });
    expect(body.message).toMatch(/^file: type/);
    expect(await bucketKeys()).toEqual(before);
  });

  it('answers 400 without a file part and for an empty file', async () => {
    const missing = await callUpload(uploadInput(alice.headers, undefined, [{ name: 'other', data: 'x' }]));
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^file: part is missing/);
    const empty = await callUpload(uploadInput(alice.headers, { bytes: Buffer.alloc(0) }));
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('file: is empty');
  });

  it('answers 415 for a body that is not multipart', async () => {
    const { status } = await callUpload({
      method: 'POST',
      path: '/api/v1/upload',
      body: png.bytes,
      headers: { ...alice.headers, 'content-type': 'image/png' },
    });
    expect(status).toBe(415);
  });

  it('answers 413 for a file just over upload.max_bytes, and accepts one of exactly the limit', async () => {
    // A PNG padded with trailing bytes is still a PNG to the sniffer and the measurer.
    const limit = config.upload.max_bytes;
    const base = uniquePng(makePng).bytes;
    const exact = Buffer.concat([base, Buffer.alloc(limit - base.length)]);
    const over = Buffer.concat([exact, Buffer.alloc(1)]);

    const refused = await callUpload(uploadInput(alice.headers, { bytes: over }));
    const accepted = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes: exact }));

    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: 413, data: { limit_bytes: limit } });
    expect(accepted.status).toBe(200);
    // The limit applies to what was sent; the stored PNG ends at IEND (stripping drops the padding).
    expect(accepted.body.data.size).toBe(base.length);
  });

  it('refuses a body far over the limit before reading it, naming the file limit as the stream does', async () => {
    // A 5 MB photo from PicGo: over the body limit (the file limit plus the form's allowance), so refused
    // before parsing; the answer still names the limit the user knows, not the body's.
    const limit = config.upload.max_bytes;
    const photo = Buffer.concat([uniquePng(makePng).bytes, Buffer.alloc(limit + 800 * 1024)]);

    const refused = await callUpload(uploadInput(alice.headers, { bytes: photo }));

    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({
      code: 413,
      message: `file: larger than ${limit / (1024 * 1024)} MiB (${limit} bytes); larger files go through the presigned upload (POST /api/v1/upload/presign)`,
      data: { limit_bytes: limit },
    });
  });

  it('answers 413 for a body far over the limit before reading it', async () => {
    const { status, body } = await callUpload({
      method: 'POST',
      path: '/api/v1/upload',
      body: Buffer.alloc(config.upload.max_bytes + 128 * 1024),
      headers: { ...alice.headers, 'content-type': 'multipart/form-data; boundary=x' },
    });
    expect(status).toBe(413);
    expect(body.code).toBe(413);
  });

  it('answers 401 without credentials and with a bad token', async () => {
    const { bytes } = uniquePng(makePng);
    expect((await callUpload(uploadInput({ authorization: '' }, { bytes }))).status).toBe(401);
    expect((await callUpload(uploadInput({ authorization: 'Bearer ut_nope' }, { bytes }))).status).toBe(401);
    expect((await callUpload(uploadInput({ authorization: 'Bearer not-a-session' }, { bytes }))).status).toBe(
      401,
    );
  });
});

describe('dedupe per owner', () => {
  it('returns the existing record for the same bytes from the same owner, a new one for another owner', async () => {
    const { bytes } = uniquePng(makePng);
    const before = new Set(await bucketKeys());
    const first = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes, filename: 'a.png' }));
    const again = await callUpload<UploadRecord>(
      uploadInput(alice.headers, { bytes, filename: 'b.png' }, [{ name: 'permission', data: 'public' }]),
    );
    const other = await callUpload<UploadRecord>(uploadInput(bob.headers, { bytes, filename: 'c.png' }));

    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(other.body.data.id).not.toBe(first.body.data.id);
    expect(other.body.data.hash).toBe(first.body.data.hash);
    const added = (await bucketKeys()).filter((key) => !before.has(key)).sort();
    expect(added).toEqual([first.body.data.key, other.body.data.key].sort());
  });

  it('takes the record back when its bytes cannot be stored, so the same upload can succeed later', async () => {
    // Prepare: the same services over a storage whose PutObject fails.
    const owner = await createTestAccount();
    const { bytes } = uniquePng(makePng);
    const storage = new FileStorage(s3Client(config.aws), config.bucket_name);
    const broken = Object.assign(Object.create(storage) as FileStorage, {
      put: async () => {
        throw Object.assign(new Error('storage is down'), { name: 'ServiceUnavailable' });
      },
    });
    const failing = testDeps({ storage: broken }).uploads;
    const { body, contentType } = buildMultipart([{ name: 'file', filename: 'x.png', data: bytes }]);

    // Act
    const failure = failing.directUploads.upload(owner.account, { body, contentType });
    await expect(failure).rejects.toThrow('storage is down');
    const publicForm = buildMultipart([
      { name: 'file', filename: 'x.png', data: bytes },
      { name: 'permission', data: 'public' },
    ]);
    const publicFailure = failing.directUploads.upload(owner.account, {
      body: publicForm.body,
      contentType: publicForm.contentType,
    });
    await expect(publicFailure).rejects.toThrow('storage is down');
    const listed = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: owner.headers,
    });
    const retried = await callUpload<UploadRecord>(uploadInput(owner.headers, { bytes }));

    // Assess
    expect(listed.body.data.items).toEqual([]);
    expect(retried.status).toBe(200);
    expect((await storedObject(retried.body.data.key)).bytes.equals(bytes)).toBe(true);
  });

  it('gives one record and one object for 10 concurrent identical uploads', async () => {
    // Prepare
    const owner = await createTestAccount();
    const { bytes } = uniquePng(makePng);
    const before = new Set(await bucketKeys());

    // Act
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        callUpload<UploadRecord>(uploadInput(owner.headers, { bytes, filename: `copy-${index}.png` })),
      ),
    );

    // Assess
    expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
    const ids = new Set(results.map((result) => result.body.data.id));
    expect(ids.size).toBe(1);
    const listing = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: owner.headers,
    });
    expect(listing.body.data.items).toHaveLength(1);
    const added = (await bucketKeys()).filter((key) => !before.has(key));
    expect(added).toEqual([results[0]!.body.data.key]);
  });
});
