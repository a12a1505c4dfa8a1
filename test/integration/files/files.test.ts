// File management and the public gallery through the upload handler, and GET /i/<key> through the render
// handler: ownership (other people's files are 404), newest-first cursor pages, permission and deletion.
import { beforeAll, describe, expect, it } from 'vitest';
import { type FilePage, GALLERY_PAGE_MAX } from '#lib/files/files.ts';
import { trashKey } from '#lib/files/prefixes.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callImage, callUpload, uniquePng, uploadInput } from './helpers.ts';

interface Page {
  items: UploadRecord[];
  next_cursor: string | null;
}

let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob] = await Promise.all([createTestAccount(), createTestAccount()]);
});

async function upload(account: TestAccount, permission?: 'public' | 'private'): Promise<UploadRecord> {
  const { bytes } = uniquePng(makePng);
  const extra = permission ? [{ name: 'permission', data: permission }] : [];
  const { status, body } = await callUpload<UploadRecord>(uploadInput(account.headers, { bytes }, extra));
  expect(status).toBe(200);
  return body.data;
}

async function allPages(
  path: string,
  headers: Record<string, string>,
  limit: number,
): Promise<UploadRecord[][]> {
  const pages: UploadRecord[][] = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { status, body } = await callUpload<Page>({ path: `${path}?${query}`, headers });
    expect(status).toBe(200);
    pages.push(body.data.items);
    cursor = body.data.next_cursor;
  } while (cursor);
  return pages;
}

describe('GET /api/v1/files', () => {
  it('lists only the caller’s files, newest first, in cursor pages', async () => {
    // Prepare
    const owner = await createTestAccount();
    const made: UploadRecord[] = [];
    for (let index = 0; index < 5; index += 1) made.push(await upload(owner));
    await upload(bob);

    // Act
    const pages = await allPages('/api/v1/files', owner.headers, 2);

    // Assess
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]).toHaveLength(2);
    expect(pages.flat().map((record) => record.id)).toEqual(made.map((record) => record.id).reverse());
  });

  it('refuses a bad limit and a forged cursor with 400', async () => {
    const badLimit = await callUpload({ path: '/api/v1/files?limit=0', headers: alice.headers });
    const tooMany = await callUpload({ path: '/api/v1/files?limit=101', headers: alice.headers });
    const garbage = await callUpload({ path: '/api/v1/files?cursor=%%%', headers: alice.headers });
    // A well-formed cursor of Bob's listing does not let Alice read on in it.
    const forged = Buffer.from(
      JSON.stringify({ pk: 'file#x', sk: 'file', gsi1pk: `files#${bob.account.id}`, gsi1sk: 'z' }),
    ).toString('base64url');
    const stolen = await callUpload({ path: `/api/v1/files?cursor=${forged}`, headers: alice.headers });

    expect([badLimit.status, tooMany.status, garbage.status, stolen.status]).toEqual([400, 400, 400, 400]);
    expect(stolen.body.message).toMatch(/cursor/);
  });

  it('needs credentials', async () => {
    expect((await callUpload({ path: '/api/v1/files' })).status).toBe(401);
  });
});

describe('one file', () => {
  it('is readable by its owner and 404 to anyone else, as is an unknown id', async () => {
    const record = await upload(alice);
    const mine = await callUpload<UploadRecord>({
      path: `/api/v1/files/${record.id}`,
      headers: alice.headers,
    });
    const theirs = await callUpload({ path: `/api/v1/files/${record.id}`, headers: bob.headers });
    const unknown = await callUpload({
      path: '/api/v1/files/00000000-0000-4000-8000-000000000000',
      headers: alice.headers,
    });
    const junk = await callUpload({ path: '/api/v1/files/not-an-id', headers: alice.headers });

    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual(record);
    expect([theirs.status, unknown.status, junk.status]).toEqual([404, 404, 404]);
  });

  it('changes permission for its owner only, and the gallery follows', async () => {
    const record = await upload(alice);
    const bobTries = await callUpload({
      method: 'PATCH',
      path: `/api/v1/files/${record.id}`,
      body: { permission: 'public' },
      headers: bob.headers,
    });
    const invalid = await callUpload({
      method: 'PATCH',
      path: `/api/v1/files/${record.id}`,
      body: { permission: 'everyone' },
      headers: alice.headers,
    });
    const opened = await callUpload<UploadRecord>({
      method: 'PATCH',
      path: `/api/v1/files/${record.id}`,
      body: { permission: 'public' },
      headers: alice.headers,
    });
    const galleryOpen = (await allPages('/api/v1/gallery', {}, 100)).flat();
    const closed = await callUpload<UploadRecord>({
      method: 'PATCH',
      path: `/api/v1/files/${record.id}`,
      body: { permission: 'private' },
      headers: alice.headers,
    });
    const galleryClosed = (await allPages('/api/v1/gallery', {}, 100)).flat();

    expect(bobTries.status).toBe(404);
    expect(invalid.status).toBe(400);
    expect(opened.body.data).toEqual({ ...record, permission: 'public' });
    expect(galleryOpen.map((item) => item.id)).toContain(record.id);
    expect(closed.body.data.permission).toBe('private');
    expect(galleryClosed.map((item) => item.id)).not.toContain(record.id);
  });

  it('is deleted by its owner only, to the trash, then for good with its object; gone everywhere', async () => {
    const record = await upload(alice, 'public');
    const bobTries = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${record.id}`,
      headers: bob.headers,
    });
    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${record.id}`,
      headers: alice.headers,
    });
    const again = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${record.id}`,
      headers: alice.headers,
    });
    // In the trash (docs/UPLOADS.md "Trash"), its bytes are kept under trash/ until it is deleted from there.
    const kept = [...(await bucketKeys(record.key)), ...(await bucketKeys(trashKey(record.key)))];
    const purged = await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/trash/${record.id}`,
      headers: alice.headers,
    });

    expect(bobTries.status).toBe(404);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: record.id, deleted: true });
    expect(again.status).toBe(404);
    expect(kept).toEqual([trashKey(record.key)]);
    expect(purged.body.data).toEqual({ id: record.id, deleted: true });
    expect(await bucketKeys(record.key)).toEqual([]);
    expect(await bucketKeys(trashKey(record.key))).toEqual([]);
    expect((await callImage({ path: `/i/${record.key}` })).statusCode).toBe(404);
    expect((await callUpload({ path: `/api/v1/files/${record.id}`, headers: alice.headers })).status).toBe(
      404,
    );
    expect((await allPages('/api/v1/gallery', {}, 100)).flat().map((item) => item.id)).not.toContain(
      record.id,
    );
  });

  it('can be uploaded again after deletion (the dedupe claim goes with the record)', async () => {
    const { bytes } = uniquePng(makePng);
    const first = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes }));
    await callUpload({
      method: 'DELETE',
      path: `/api/v1/files/${first.body.data.id}`,
      headers: alice.headers,
    });
    const second = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes }));
    expect(second.status).toBe(200);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });
});

describe('GET /api/v1/gallery', () => {
  it('lists public files of everyone, newest first, without credentials, in pages', async () => {
    const a = await upload(alice, 'public');
    await upload(alice, 'private');
    const b = await upload(bob, 'public');
    const c = await upload(alice, 'public');

    const pages = await allPages('/api/v1/gallery', {}, 2);
    const ids = pages.flat().map((item) => item.id);

    expect(pages[0]).toHaveLength(2);
    expect(ids.slice(0, 3)).toEqual([c.id, b.id, a.id]);
    expect(pages.flat().every((item) => item.permission === 'public')).toBe(true);
  });
});

describe('GET /api/v1/gallery: an anonymous page', () => {
  it(`holds at most ${GALLERY_PAGE_MAX} files whatever limit asks, and may be kept a minute by anyone`, async () => {
    await Promise.all(Array.from({ length: GALLERY_PAGE_MAX + 2 }, () => upload(bob, 'public')));

    const { body, headers } = await callUpload<FilePage>({ path: '/api/v1/gallery?limit=100' });

    expect(body.data.items).toHaveLength(GALLERY_PAGE_MAX);
    expect(body.data.next_cursor).not.toBeNull();
    expect(headers['cache-control']).toBe('public, max-age=60');
  }, 60_000);
});

describe('GET /i/<key> (render handler)', () => {
  it('answers the bytes with their type and long-lived cache headers, to anyone', async () => {
    const image = uniquePng(makePng);
    const { body } = await callUpload<UploadRecord>(uploadInput(alice.headers, { bytes: image.bytes }));

    const result = await callImage({ path: new URL(body.data.url).pathname });

    expect(result.statusCode).toBe(200);
    expect(result.isBase64Encoded).toBe(true);
    expect(Buffer.from(result.body ?? '', 'base64').equals(image.bytes)).toBe(true);
    expect(result.headers).toMatchObject({
      'content-type': 'image/png',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
  });

  it('answers 404 for unknown keys, malformed keys and unconfirmed presigned uploads', async () => {
    const grant = await callUpload<{ key: string; url: string; headers: Record<string, string> }>({
      method: 'POST',
      path: '/api/v1/upload/presign',
      body: { mime_type: 'image/png', size: 10 },
      headers: alice.headers,
    });
    await fetch(grant.body.data.url, {
      method: 'PUT',
      body: Buffer.alloc(10),
      headers: grant.body.data.headers,
    });

    for (const path of [
      '/i/2026/01/01/00000000-0000-4000-8000-000000000000-000000000000.png',
      '/i/nothing',
      `/i/incoming/${grant.body.data.key}`,
      `/i/${grant.body.data.key}`,
    ]) {
      const result = await callImage({ path });
      expect(result.statusCode, path).toBe(404);
    }
    expect(config.base_url).toBe('http://localhost:3000');
  });
});
