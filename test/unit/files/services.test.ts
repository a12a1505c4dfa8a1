// The upload services' pure parts: API token format and hashing, the presigned PUT's signature scope,
// the HTTP answer of pipeline errors, and how the files Lambda answers small and large objects.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { DISPLAY_PREFIX_LENGTH, generateApiToken, hashApiToken } from '#lib/accounts/api-tokens.ts';
import { AppError } from '#lib/core/errors.ts';
import { UploadError } from '#lib/files/errors.ts';
import { statusOf } from '#lib/http/errors.ts';
import { INLINE_MAX_BYTES, storedFileResult } from '#lib/http/stored-file.ts';
import { FileStorage, type StoredObject } from '#lib/platform/storage/s3.ts';

const client = new S3Client({
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  endpoint: 'https://s3.example.test',
  forcePathStyle: true,
});

describe('API tokens', () => {
  it('are ut_ plus 43 base64url characters (32 random bytes), different every time', () => {
    const tokens = new Set(Array.from({ length: 100 }, () => generateApiToken()));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^ut_[A-Za-z0-9_-]{43}$/);
    expect(DISPLAY_PREFIX_LENGTH).toBeLessThan(12);
  });

  it('are stored as the lower-case hex SHA-256 of the whole secret', () => {
    expect(hashApiToken('ut_abc')).toBe(createHash('sha256').update('ut_abc').digest('hex'));
    expect(hashApiToken('ut_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiToken('ut_abc')).not.toBe(hashApiToken('ut_abd'));
  });
});

describe('presigned PUT', () => {
  it('signs Content-Type and Content-Length and carries no checksum parameters', async () => {
    const storage = new FileStorage(client, 'bucket');
    const signingDate = new Date('2026-11-21T08:00:00Z');
    const url = new URL(
      await storage.presignPut('incoming/2026/11/21/x.png', {
        contentType: 'image/png',
        size: 1234,
        expiresInSeconds: 900,
        signingDate,
      }),
    );
    expect(url.pathname).toBe('/bucket/incoming/2026/11/21/x.png');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20261121T080000Z');
    expect([...url.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
  });
});

describe('UploadError as an HTTP answer', () => {
  it('keeps status and message, and reports the limit of a 413', () => {
    const tooBig = new UploadError('payload_too_large', 'file: larger than 10 bytes', { limitBytes: 10 });
    const wrongType = new UploadError('unsupported_media_type', 'file: type text/plain is not allowed');
    const bad = new UploadError('bad_request', 'file: is empty');
    expect(tooBig).toBeInstanceOf(AppError);
    expect([statusOf(tooBig), tooBig.message, tooBig.data]).toEqual([
      413,
      'file: larger than 10 bytes',
      { limit_bytes: 10 },
    ]);
    expect([statusOf(wrongType), wrongType.errorName]).toEqual([415, 'unsupported_media_type']);
    expect([statusOf(bad), bad.message]).toEqual([400, 'file: is empty']);
  });
});

describe('storedFileResult (the files Lambda)', () => {
  const KEY = '2026/11/21/0b9c6f1e-2d3a-4c5b-8e7f-9a0b1c2d3e4f-abababababab.png';

  function fakeStorage(object: Partial<StoredObject> | undefined) {
    const opened: string[] = [];
    const storage = {
      open: async (key: string) => {
        opened.push(key);
        return (
          object &&
          ({ contentType: 'image/png', etag: '"e"', lastModified: undefined, ...object } as StoredObject)
        );
      },
      presignGet: async (key: string, seconds: number) => `https://signed.example/${key}?expires=${seconds}`,
    } as unknown as FileStorage;
    return { storage, opened };
  }

  it('answers a small object inline with its type and immutable caching', async () => {
    const { storage } = fakeStorage({ body: Readable.from([Buffer.from('abc')]), contentLength: 3 });
    const result = await storedFileResult(storage, KEY);
    expect(result).toMatchObject({
      kind: 'raw',
      status: 200,
      headers: {
        'content-type': 'image/png',
        'cache-control': 'public, max-age=31536000, immutable',
        etag: '"e"',
      },
    });
    expect((result as { body: Buffer }).body.toString()).toBe('abc');
  });

  it('redirects to a short presigned GET for an object over the inline limit', async () => {
    const body = Readable.from([Buffer.alloc(1)]);
    const { storage } = fakeStorage({ body, contentLength: INLINE_MAX_BYTES + 1 });
    const result = await storedFileResult(storage, KEY);
    expect(result).toMatchObject({
      status: 302,
      headers: { location: `https://signed.example/${KEY}?expires=300`, 'cache-control': 'no-store' },
    });
    expect(body.destroyed).toBe(true);
  });

  it('never looks up keys outside the record form (such as incoming/...)', async () => {
    const { storage, opened } = fakeStorage(undefined);
    await expect(storedFileResult(storage, `incoming/${KEY}`)).rejects.toMatchObject({
      errorName: 'not_found',
    });
    await expect(storedFileResult(storage, '../secret')).rejects.toMatchObject({ errorName: 'not_found' });
    expect(opened).toEqual([]);
    await expect(storedFileResult(storage, KEY)).rejects.toMatchObject({ errorName: 'not_found' });
    expect(opened).toEqual([KEY]);
  });
});
