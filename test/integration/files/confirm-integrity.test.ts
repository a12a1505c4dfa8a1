// Confirm stores exactly the bytes it inspected: a second PUT to the still-valid presigned URL while a
// confirm runs never yields a record describing other bytes (docs/UPLOADS.md, presigned upload).
import { createHash } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { stripMetadata } from '#lib/files/metadata/index.ts';
import { incomingKey } from '#lib/files/prefixes.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { config } from '#lib/platform/config/index.ts';
import { FileStorage } from '#lib/platform/storage/s3.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps, testStorage } from '#test/support/deps.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { jpegWithMetadata, pngWithMetadata } from '#test/support/metadata-images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callImage, callUpload, type Envelope } from './helpers.ts';

let alice: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  alice = await createTestAccount();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Two different PNGs of the same length, so either passes confirm's size check. */
function twoPngsOfOneSize(): [Buffer, Buffer] {
  const width = 4 + Math.floor(Math.random() * 20);
  const first = makePng(width, 5, [10, 20, Math.floor(Math.random() * 256)]);
  for (let red = 0; red < 256; red += 1) {
    const other = makePng(width, 5, [red, 200, 30]);
    if (other.length === first.length && !other.equals(first)) return [first, other];
  }
  throw new Error('no second PNG of the same length');
}

/** Storage whose first copy or write of a record finds `incoming/<key>` replaced by `replacement` (a second PUT). */
class ReplacedBeforeStore extends FileStorage {
  replacement: Buffer | undefined;
  private async replaceIncoming(key: string) {
    const bytes = this.replacement;
    this.replacement = undefined;
    if (bytes) await super.put(incomingKey(key), bytes, 'image/png');
  }
  override async copyIfMatch(fromKey: string, toKey: string, contentType: string, etag: string) {
    await this.replaceIncoming(toKey);
    return super.copyIfMatch(fromKey, toKey, contentType, etag);
  }
  override async put(key: string, bytes: Buffer, contentType: string, sha256Hex?: string) {
    if (!key.startsWith('incoming/')) await this.replaceIncoming(key);
    return super.put(key, bytes, contentType, sha256Hex);
  }
}

function racingService() {
  const plain = testStorage();
  const storage = new ReplacedBeforeStore(plain.client, plain.bucket);
  const deps = testDeps({ storage });
  const call = async <T>(input: EventInput) => {
    const result = await deps.handlers.files(apiEvent(input), lambdaContext as Context);
    return { status: result.statusCode ?? 0, body: parseBody(result) as Envelope<T> };
  };
  return { storage, deps, call };
}

async function presignAndPut(bytes: Buffer, mimeType: string): Promise<string> {
  const grant = await callUpload<PresignResult>({
    method: 'POST',
    path: '/api/v1/upload/presign',
    body: { mime_type: mimeType, size: bytes.length },
    headers: alice.headers,
  });
  const put = await fetch(grant.body.data.url, {
    method: 'PUT',
    body: bytes,
    headers: { 'Content-Type': mimeType },
  });
  expect(put.ok).toBe(true);
  return grant.body.data.key;
}

const confirmInput = (key: string): EventInput => ({
  method: 'POST',
  path: '/api/v1/upload/confirm',
  body: { key },
  headers: alice.headers,
});

describe('POST /api/v1/upload/confirm while the object is replaced', () => {
  it('answers 409 and records nothing when the bytes change between inspection and copy; the grant stays', async () => {
    const [inspected, replacement] = twoPngsOfOneSize();
    const key = await presignAndPut(inspected, 'image/png');
    const { storage, deps, call } = racingService();
    storage.replacement = replacement;

    const raced = await call<UploadRecord>(confirmInput(key));

    expect(raced.status).toBe(409);
    expect(raced.body.message).toBe('file: changed during confirm; confirm again');
    const id = key.split('/').pop()!.slice(0, 36);
    expect(await deps.uploads.files.getItem(id)).toBeUndefined();
    expect(await bucketKeys(key)).toEqual([]);
    expect(await deps.uploads.files.findByHash(alice.account.id, sha256(inspected))).toBeUndefined();

    // Confirming again records what is there now, under the same grant.
    const again = await callUpload<UploadRecord>(confirmInput(key));
    expect(again.status).toBe(200);
    expect(again.body.data.hash).toBe(sha256(replacement));
    const served = await callImage({ path: `/i/${key}` });
    expect(Buffer.from(served.body ?? '', 'base64').equals(replacement)).toBe(true);
  });

  it('stores the inspected (stripped) bytes when the object is replaced before they are written', async () => {
    const photo = jpegWithMetadata({ width: 11 + Math.floor(Math.random() * 30), height: 7, orientation: 6 });
    const key = await presignAndPut(photo, 'image/jpeg');
    const { storage, call } = racingService();
    storage.replacement = Buffer.alloc(photo.length, 0xab);

    const { status, body } = await call<UploadRecord>(confirmInput(key));

    expect(status).toBe(200);
    const served = await callImage({ path: `/i/${key}` });
    const bytes = Buffer.from(served.body ?? '', 'base64');
    expect(body.data.hash).toBe(sha256(bytes));
    expect(body.data.size).toBe(bytes.length);
    const stripped = stripMetadata(photo, 'jpeg');
    expect(stripped.kind === 'stripped' && bytes.equals(stripped.bytes)).toBe(true);
    expect(config.upload.strip_metadata).toBe(true);
  });

  it('writes a PNG with metadata in its stripped form (not copied), hash and size of what is stored', async () => {
    const photo = pngWithMetadata({ width: 5 + Math.floor(Math.random() * 30), height: 7, orientation: 6 });
    const key = await presignAndPut(photo, 'image/png');

    const { status, body } = await callUpload<UploadRecord>(confirmInput(key));

    expect(status).toBe(200);
    const served = await callImage({ path: `/i/${key}` });
    const bytes = Buffer.from(served.body ?? '', 'base64');
    const stripped = stripMetadata(photo, 'png');
    expect(stripped.kind === 'stripped' && bytes.equals(stripped.bytes)).toBe(true);
    expect(bytes.length).toBeLessThan(photo.length);
    expect(body.data.hash).toBe(sha256(bytes));
    expect(body.data.size).toBe(bytes.length);
  });

  it('stores the inspected (stripped) PNG when the object is replaced before it is written', async () => {
    // Dimensions of its own: not a duplicate of the file above (that would settle onto it, nothing written).
    const photo = pngWithMetadata({ width: 40 + Math.floor(Math.random() * 40), height: 9, orientation: 6 });
    const key = await presignAndPut(photo, 'image/png');
    const { storage, call } = racingService();
    const replacement = Buffer.from(photo);
    replacement.writeUInt8(replacement.readUInt8(replacement.length - 30) ^ 0xff, replacement.length - 30);
    storage.replacement = replacement;

    const { status, body } = await call<UploadRecord>(confirmInput(key));

    expect(status).toBe(200);
    const served = await callImage({ path: `/i/${key}` });
    const bytes = Buffer.from(served.body ?? '', 'base64');
    const stripped = stripMetadata(photo, 'png');
    expect(stripped.kind === 'stripped' && bytes.equals(stripped.bytes)).toBe(true);
    expect(body.data.hash).toBe(sha256(bytes));
  });
});
