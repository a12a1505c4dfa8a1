// The back office's files (GET/PATCH/DELETE /api/v1/admin/files) through the upload handler: any
// account's files, every file newest first, permission changes, deletion giving the owner's usage back
// exactly once, and who may ask.
import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, callUpload, uniquePng, uploadInput } from './helpers.ts';

let admin: TestAccount;
let bob: TestAccount;
let carol: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [admin, bob, carol] = await Promise.all([
    createTestAccount({ role: 'admin' }),
    createTestAccount(),
    createTestAccount(),
  ]);
});

interface FilePage {
  items: UploadRecord[];
  next_cursor: string | null;
}

type AdminRecord = UploadRecord & { owner_id: string; owner_username: string | null };

interface Usage {
  used_bytes: number;
  file_count: number;
}

async function upload(account: TestAccount, permission: 'public' | 'private' = 'private') {
  const { status, body } = await callUpload<UploadRecord>(
    uploadInput(account.headers, { bytes: uniquePng(makePng).bytes }, [
      { name: 'permission', data: permission },
    ]),
  );
  expect(status).toBe(200);
  return body.data;
}

async function usage(account: TestAccount): Promise<Usage> {
  return (await callUpload<Usage>({ path: '/api/v1/usage', headers: account.headers })).body.data;
}

const withQuery = (path: string, query: Record<string, string>) => `${path}?${new URLSearchParams(query)}`;

async function adminPages(query: Record<string, string>, limit: number): Promise<UploadRecord[][]> {
  const pages: UploadRecord[][] = [];
  let cursor: string | null = null;
  do {
    const page: Record<string, string> = { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) };
    const { status, body }: { status: number; body: { data: FilePage } } = await callUpload<FilePage>({
      path: withQuery('/api/v1/admin/files', page),
      headers: admin.headers,
    });
    expect(status).toBe(200);
    pages.push(body.data.items);
    cursor = body.data.next_cursor;
  } while (cursor !== null && pages.length < 50);
  return pages;
}

const adminDelete = (id: string, headers = admin.headers) =>
  callUpload({ method: 'DELETE', path: `/api/v1/admin/files/${id}`, headers });

describe('GET /api/v1/admin/files', () => {
  it("lists one account's files with owner_id, and every file newest first without it", async () => {
    const first = await upload(bob, 'private');
    const second = await upload(carol, 'public');
    const third = await upload(bob, 'public');

    const bobs = (await adminPages({ owner_id: bob.account.id }, 1)).flat();
    const everything = (await adminPages({}, 2)).flat();

    expect(bobs.map((item) => item.id)).toEqual([third.id, first.id]);
    const ids = everything.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    const ours = ids.filter((id) => [first.id, second.id, third.id].includes(id));
    expect(ours).toEqual([third.id, second.id, first.id]);
    const times = everything.map((item) => item.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it("names each file's owner (id and username) for two owners, and the owner_id filter keeps only one", async () => {
    const [frank, grace] = await Promise.all([createTestAccount(), createTestAccount()]);
    const franks = await upload(frank, 'public');
    const graces = await upload(grace, 'private');
    const franksSecond = await upload(frank, 'private');

    const everything = (await adminPages({}, 100)).flat();
    const filtered = (await adminPages({ owner_id: grace.account.id }, 100)).flat();
    const own = await callUpload<FilePage>({ path: '/api/v1/files', headers: frank.headers });

    const ownerOf = (id: string) => {
      const item = everything.find((candidate) => candidate.id === id) as AdminRecord | undefined;
      return item && { owner_id: item.owner_id, owner_username: item.owner_username };
    };
    const frankOwner = { owner_id: frank.account.id, owner_username: frank.account.username };
    expect(ownerOf(franks.id)).toEqual(frankOwner);
    expect(ownerOf(franksSecond.id)).toEqual(frankOwner);
    expect(ownerOf(graces.id)).toEqual({
      owner_id: grace.account.id,
      owner_username: grace.account.username,
    });
    expect(filtered).toEqual([
      { ...graces, owner_id: grace.account.id, owner_username: grace.account.username },
    ]);
    // The owner's own listing names nobody: it is all theirs.
    expect(own.body.data.items[0]).not.toHaveProperty('owner_id');
    expect(own.body.data.items[0]).not.toHaveProperty('owner_username');
  });

  it('answers an empty page for an unknown owner, 400 for a forged cursor, 403 to a user', async () => {
    const unknown = await callUpload<FilePage>({
      path: withQuery('/api/v1/admin/files', { owner_id: '00000000-0000-4000-8000-000000000000' }),
      headers: admin.headers,
    });
    const forged = await callUpload({
      path: withQuery('/api/v1/admin/files', { cursor: Buffer.from('{"before":"x"}').toString('base64url') }),
      headers: admin.headers,
    });
    const user = await callUpload({ path: '/api/v1/admin/files', headers: bob.headers });

    expect(unknown.status).toBe(200);
    expect(unknown.body.data).toEqual({ items: [], next_cursor: null });
    expect(forged.status).toBe(400);
    expect(forged.body.message).toMatch(/^query\.cursor/);
    expect(user.status).toBe(403);
  });
});

describe('PATCH /api/v1/admin/files/{id}', () => {
  it("changes another account's permission, and the gallery follows; 400 names the field, 404, 403", async () => {
    const record = await upload(carol, 'private');

    const opened = await callUpload<UploadRecord>({
      method: 'PATCH',
      path: `/api/v1/admin/files/${record.id}`,
      body: { permission: 'public' },
      headers: admin.headers,
    });
    const gallery = await callUpload<FilePage>({ path: '/api/v1/gallery?limit=100' });
    const invalid = await callUpload({
      method: 'PATCH',
      path: `/api/v1/admin/files/${record.id}`,
      body: { permission: 'everyone' },
      headers: admin.headers,
    });
    const unknown = await callUpload({
      method: 'PATCH',
      path: '/api/v1/admin/files/00000000-0000-4000-8000-000000000000',
      body: { permission: 'public' },
      headers: admin.headers,
    });
    const user = await callUpload({
      method: 'PATCH',
      path: `/api/v1/admin/files/${record.id}`,
      body: { permission: 'private' },
      headers: carol.headers,
    });

    expect(opened.status).toBe(200);
    expect(opened.body.data).toEqual({ ...record, permission: 'public' });
    expect(gallery.body.data.items.map((item) => item.id)).toContain(record.id);
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toMatch(/permission/);
    expect(unknown.status).toBe(404);
    expect(user.status).toBe(403);
  });
});

describe('DELETE /api/v1/admin/files/{id}', () => {
  it("deletes another account's file: record, object, and exactly its bytes from the owner's usage", async () => {
    const dave = await createTestAccount();
    const kept = await upload(dave);
    const record = await upload(dave);
    const before = await usage(dave);

    const user = await adminDelete(record.id, bob.headers);
    const deleted = await adminDelete(record.id);
    const again = await adminDelete(record.id);
    const after = await usage(dave);

    expect(user.status).toBe(403);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: record.id, deleted: true });
    expect(again.status).toBe(404);
    expect(after).toMatchObject({
      used_bytes: before.used_bytes - record.size,
      file_count: before.file_count - 1,
    });
    expect(await bucketKeys(record.key)).toEqual([]);
    expect(await bucketKeys(kept.key)).toEqual([kept.key]);
    const own = await callUpload({ path: `/api/v1/files/${record.id}`, headers: dave.headers });
    expect(own.status).toBe(404);
  });

  it('of 10 concurrent deletes of one file, one succeeds and the usage is given back once', async () => {
    const erin = await createTestAccount();
    await upload(erin);
    const record = await upload(erin);
    const before = await usage(erin);

    const results = await Promise.all(Array.from({ length: 10 }, () => adminDelete(record.id)));
    const after = await usage(erin);

    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(9).fill(404)]);
    expect(after).toMatchObject({
      used_bytes: before.used_bytes - record.size,
      file_count: before.file_count - 1,
    });
  });
});
