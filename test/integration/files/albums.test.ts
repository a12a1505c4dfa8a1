// Albums (docs/DESIGN.md 16) through the upload handler against DynamoDB Local and s3rver: create, list,
// rename, delete (files stay, outside any album), album_id by upload form, presign and PATCH, the album's
// listing, and another account's album as 404.
import { beforeAll, describe, expect, it } from 'vitest';
import type { PresignResult } from '#lib/files/presign.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callUpload, uploadInput } from './helpers.ts';

interface Album {
  id: string;
  name: string;
  description: string;
  file_count: number;
  cover_url: string | null;
  created_at: string;
  updated_at: string;
}

let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob] = await Promise.all([createTestAccount(), createTestAccount()]);
});

let shade = 0;
/** A PNG no other upload of this file has (dedupe would answer the earlier record). */
function freshPng(): Buffer {
  shade += 1;
  return makePng(3 + (shade % 40), 2 + Math.floor(shade / 40), [shade % 256, (shade * 7) % 256, 99]);
}

async function createAlbum(owner: TestAccount, name = 'Holiday', description?: string): Promise<Album> {
  const { status, body } = await callUpload<Album>({
    method: 'POST',
    path: '/api/v1/albums',
    headers: owner.headers,
    body: { name, ...(description !== undefined ? { description } : {}) },
  });
  expect(status).toBe(201);
  return body.data;
}

async function upload(owner: TestAccount, albumId?: string): Promise<UploadRecord> {
  const { status, body } = await callUpload<UploadRecord>(
    uploadInput(
      owner.headers,
      { bytes: freshPng(), filename: 'pic.png' },
      albumId ? [{ name: 'album_id', data: albumId }] : [],
    ),
  );
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data;
}

async function albumFiles(owner: TestAccount, albumId: string) {
  return callUpload<{ items: UploadRecord[]; next_cursor: string | null }>({
    path: `/api/v1/files?album_id=${albumId}`,
    headers: owner.headers,
  });
}

describe('albums', () => {
  it('creates an album with exactly the fields of DESIGN 16, empty and without a cover', async () => {
    const album = await createAlbum(alice, 'Trip', 'Mountains');
    expect(Object.keys(album).sort()).toEqual(
      ['cover_url', 'created_at', 'description', 'file_count', 'id', 'name', 'updated_at'].sort(),
    );
    expect(album).toMatchObject({ name: 'Trip', description: 'Mountains', file_count: 0, cover_url: null });
  });

  it.each([
    ['an empty name', { name: '' }, 'name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['a description over 1,000 characters', { name: 'ok', description: 'd'.repeat(1001) }, 'description'],
    ['a name that is not a string', { name: 7 }, 'name'],
  ])('refuses %s with a 400 naming the field', async (_, body, field) => {
    const { status, body: answer } = await callUpload<{ fields: Array<{ field: string }> }>({
      method: 'POST',
      path: '/api/v1/albums',
      headers: alice.headers,
      body,
    });
    expect(status).toBe(400);
    expect(JSON.stringify(answer)).toContain(field);
  });

  it('takes uploads by the form field and by presign and confirm, lists them newest first, counts them and shows the newest as cover', async () => {
    const album = await createAlbum(alice);
    const first = await upload(alice, album.id);
    const second = await upload(alice, album.id);
    const outside = await upload(alice);
    expect(first.album_id).toBe(album.id);
    expect(outside.album_id).toBeNull();

    // Presigned into the album: the confirmed record lands in it.
    const bytes = freshPng();
    const presign = await callUpload<PresignResult>({
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: alice.headers,
      body: { mime_type: 'image/png', size: bytes.length, album_id: album.id },
    });
    expect(presign.status).toBe(200);
    const put = await fetch(presign.body.data.url, {
      method: 'PUT',
      body: bytes,
      headers: { 'Content-Type': 'image/png' },
    });
    expect(put.ok).toBe(true);
    const confirmed = await callUpload<UploadRecord>({
      method: 'POST',
      path: '/api/v1/upload/confirm',
      headers: alice.headers,
      body: { key: presign.body.data.key },
    });
    expect(confirmed.body.data.album_id).toBe(album.id);

    const listed = await albumFiles(alice, album.id);
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.map((file) => file.id)).toEqual([
      confirmed.body.data.id,
      second.id,
      first.id,
    ]);
    const all = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files?limit=100',
      headers: alice.headers,
    });
    expect(all.body.data.items.find((item) => item.id === first.id)?.album_id).toBe(album.id);
    expect(all.body.data.items.find((item) => item.id === outside.id)?.album_id).toBeNull();
    const got = await callUpload<Album>({ path: `/api/v1/albums/${album.id}`, headers: alice.headers });
    expect(got.body.data.file_count).toBe(3);
    expect(got.body.data.cover_url).toBe(confirmed.body.data.thumbnail);
  });

  it('moves a file in and out with PATCH {album_id}, and between albums', async () => {
    const [one, two] = [await createAlbum(alice, 'One'), await createAlbum(alice, 'Two')];
    const file = await upload(alice);
    const patch = (albumId: string | null) =>
      callUpload<UploadRecord>({
        method: 'PATCH',
        path: `/api/v1/files/${file.id}`,
        headers: alice.headers,
        body: { album_id: albumId },
      });

    expect((await patch(one.id)).body.data.album_id).toBe(one.id);
    expect((await albumFiles(alice, one.id)).body.data.items.map((f) => f.id)).toEqual([file.id]);
    expect((await patch(two.id)).body.data.album_id).toBe(two.id);
    expect((await albumFiles(alice, one.id)).body.data.items).toEqual([]);
    expect((await albumFiles(alice, two.id)).body.data.items.map((f) => f.id)).toEqual([file.id]);
    const out = await patch(null);
    expect(out.status).toBe(200);
    expect(out.body.data.album_id).toBeNull();
    expect((await albumFiles(alice, two.id)).body.data.items).toEqual([]);
  });

  it("answers 404 for another account's album everywhere: read, rename, delete, list, upload, presign, move", async () => {
    const theirs = await createAlbum(bob, 'Private');
    const mine = await upload(alice);
    const attempts = [
      callUpload({ path: `/api/v1/albums/${theirs.id}`, headers: alice.headers }),
      callUpload({
        method: 'PATCH',
        path: `/api/v1/albums/${theirs.id}`,
        headers: alice.headers,
        body: { name: 'x' },
      }),
      callUpload({ method: 'DELETE', path: `/api/v1/albums/${theirs.id}`, headers: alice.headers }),
      albumFiles(alice, theirs.id),
      callUpload(uploadInput(alice.headers, { bytes: freshPng() }, [{ name: 'album_id', data: theirs.id }])),
      callUpload({
        method: 'POST',
        path: '/api/v1/upload/presign',
        headers: alice.headers,
        body: { mime_type: 'image/png', size: 10, album_id: theirs.id },
      }),
      callUpload({
        method: 'PATCH',
        path: `/api/v1/files/${mine.id}`,
        headers: alice.headers,
        body: { album_id: theirs.id },
      }),
      callUpload({ path: '/api/v1/albums/not-an-album-id', headers: alice.headers }),
    ];
    for (const result of await Promise.all(attempts)) {
      expect(result.status).toBe(404);
      expect(result.body.message).toMatch(/album/);
    }
    // Nothing of bob's album changed.
    const still = await callUpload<Album>({ path: `/api/v1/albums/${theirs.id}`, headers: bob.headers });
    expect(still.body.data.name).toBe('Private');
  });

  it("lists only the caller's albums, newest first, in cursor pages", async () => {
    const owner = await createTestAccount();
    const made = [];
    for (const name of ['a', 'b', 'c']) made.push(await createAlbum(owner, name));
    const first = await callUpload<{ items: Album[]; next_cursor: string | null }>({
      path: '/api/v1/albums?limit=2',
      headers: owner.headers,
    });
    expect(first.body.data.items.map((album) => album.name)).toEqual(['c', 'b']);
    const second = await callUpload<{ items: Album[]; next_cursor: string | null }>({
      path: `/api/v1/albums?limit=2&cursor=${first.body.data.next_cursor}`,
      headers: owner.headers,
    });
    expect(second.body.data.items.map((album) => album.name)).toEqual(['a']);
    const forged = await callUpload({
      path: '/api/v1/albums?cursor=bm90LWEtY3Vyc29y',
      headers: owner.headers,
    });
    expect(forged.status).toBe(400);
  });

  it('renames and redescribes an album, updating updated_at', async () => {
    const album = await createAlbum(alice, 'Old');
    const { status, body } = await callUpload<Album>({
      method: 'PATCH',
      path: `/api/v1/albums/${album.id}`,
      headers: alice.headers,
      body: { name: 'New', description: 'Now described' },
    });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ id: album.id, name: 'New', description: 'Now described' });
  });

  it('deletes an album and keeps its files, which then read as outside any album', async () => {
    const album = await createAlbum(alice, 'Doomed');
    const file = await upload(alice, album.id);

    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/albums/${album.id}`,
      headers: alice.headers,
    });
    expect(deleted.status).toBe(200);

    const gone = await callUpload({ path: `/api/v1/albums/${album.id}`, headers: alice.headers });
    expect(gone.status).toBe(404);
    const kept = await callUpload<UploadRecord>({ path: `/api/v1/files/${file.id}`, headers: alice.headers });
    expect(kept.status).toBe(200);
    expect(kept.body.data.album_id).toBeNull();
    const listed = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files?limit=100',
      headers: alice.headers,
    });
    expect(listed.body.data.items.find((item) => item.id === file.id)?.album_id).toBeNull();
    expect((await albumFiles(alice, album.id)).status).toBe(404);
  });

  it('refuses a PATCH of a file with neither permission nor album_id', async () => {
    const file = await upload(alice);
    const { status } = await callUpload({
      method: 'PATCH',
      path: `/api/v1/files/${file.id}`,
      headers: alice.headers,
      body: {},
    });
    expect(status).toBe(400);
  });
});
