// Expiring uploads and the trash (docs/UPLOADS.md "Expiring uploads", "Trash") through the files, shares,
// render and account-lifecycle handlers against DynamoDB Local and s3rver, on a clock the test moves, with
// the local server's /i/* edge on the same clock: an expiring file is served until its end and 404 on every
// path one second past it, and the sweep deletes its bytes and renditions; a deleted file waits in the trash
// (404 everywhere, still counted in the usage), comes back with its share link, or is deleted for good.
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLifecycleDeps } from '#functions/account-lifecycle/deps.ts';
import { createLifecycleHandler } from '#functions/account-lifecycle/handler.ts';
import { needs } from '#functions/account-lifecycle/needs.ts';
import { trashKey } from '#lib/files/prefixes.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { renditionPrefixOf } from '#lib/files/rendition-query.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { buildMultipart, makePng } from '#test/support/images.ts';
import { startLocalEdge } from '#test/support/local-edge.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys } from './helpers.ts';
import { shareHarness } from './share-helpers.ts';

const clock = movableClock();
const deps = testDeps({ clock });
const { call, upload, album, share, open, image } = shareHarness(deps, clock);
const worker = createLifecycleHandler(() =>
  buildLifecycleDeps(
    testResources('account-lifecycle', needs, {
      settings: deps.settings,
      clock,
      provided: { mail: memoryMailer() },
    }),
  ),
);
const sweep = () => worker({}, lambdaContext as Context);

let owner: TestAccount;
let admin: TestAccount;
let edge: Awaited<ReturnType<typeof startLocalEdge>>;

beforeAll(async () => {
  await provisionTestStack();
  [owner, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  edge = await startLocalEdge(clock);
});

afterAll(async () => {
  await edge?.close();
});

/** What the local /i/* edge answers (299: a rendition it hands on to the render route). */
const atEdge = async (path: string) => (await fetch(`${edge.url}${path}`)).status;
/** A rendition through the render route, as the edge hands it on. */
const rendition = async (record: UploadRecord) => {
  const { pathname, search } = new URL(record.thumbnail!);
  return (await deps.handlers.render(apiEvent({ path: `${pathname}${search}` }), lambdaContext as Context))
    .statusCode;
};
const get = (path: string, who = owner) => call<unknown>('files', { path, headers: who.headers });
const listed = async (path: string, who = owner) =>
  ((await get(path, who)).body.data as { items: UploadRecord[] }).items.map((item) => item.id);
const usage = async (who = owner) =>
  (await get('/api/v1/usage', who)).body.data as { used_bytes: number; file_count: number };
const remove = (path: string, who = owner) => call('files', { method: 'DELETE', path, headers: who.headers });
/** Every object of the file: at its key, its renditions, its copy in the trash. */
const storedKeys = async (record: UploadRecord) => [
  ...(await bucketKeys(record.key)),
  ...(await bucketKeys(renditionPrefixOf(record.key))),
  ...(await bucketKeys(trashKey(record.key))),
];

/** A multipart upload with these text fields, as ShareX and PicGo send them; the answer as is. */
async function uploadWith(fields: Record<string, string>) {
  const { body, contentType } = buildMultipart([
    { name: 'file', filename: 'x.png', contentType: 'image/png', data: makePng(7, 5, [9, 99, 199]) },
    ...Object.entries(fields).map(([name, data]) => ({ name, data })),
  ]);
  return call<UploadRecord>('files', {
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...owner.headers, 'content-type': contentType, 'content-length': String(body.length) },
  });
}

describe('an expiring upload', () => {
  it('is served until its end, 404 on every path a second past it, and its bytes are gone after the sweep', async () => {
    // Prepare: public, in an album, shared, its thumbnail rendered.
    const albumId = await album(owner, 'Expiring');
    const record = await upload(owner, { expires_in: '60', permission: 'public', album_id: albumId });
    const created = await share(owner, { file_id: record.id });
    const opened = await open(created.id);
    const shared = opened.body.data.items[0]!;
    const paths = [`/api/v1/files/${record.id}`, '/api/v1/files', `/api/v1/files?album_id=${albumId}`];
    const before = {
      original: await atEdge(`/i/${record.key}`),
      thumbnailAtEdge: await atEdge(new URL(record.thumbnail!).pathname + new URL(record.thumbnail!).search),
      rendition: await rendition(record),
      record: (await get(paths[0]!)).status,
      listed: await listed(paths[1]!),
      album: await listed(paths[2]!),
      gallery: await listed('/api/v1/gallery?limit=60'),
      share: opened.status,
      shareImage: (await image(shared.url)).status,
      usage: await usage(),
    };

    // Act
    clock.advance(61_000);

    // Assess: 404 everywhere at once, the bytes still stored until the sweep.
    expect(record.expires_at).toBe(isoWithOffset(new Date(Date.parse(record.created_at) + 60_000)));
    // The end is in the key, so the edge needs no look-up (docs/UPLOADS.md "Expiring uploads").
    expect(record.key.endsWith(`-x${(Date.parse(record.expires_at!) / 1000).toString(36)}.png`)).toBe(true);
    expect(before).toMatchObject({
      original: 200,
      thumbnailAtEdge: 299,
      rendition: 200,
      record: 200,
      share: 200,
    });
    expect(before.shareImage).toBe(200);
    for (const ids of [before.listed, before.album, before.gallery]) expect(ids).toContain(record.id);
    expect(await atEdge(`/i/${record.key}`)).toBe(404);
    expect(await atEdge(`/i/${record.key}?p=thumb`)).toBe(404);
    expect((await get(paths[0]!)).status).toBe(404);
    expect(await listed(paths[1]!)).not.toContain(record.id);
    expect(await listed(paths[2]!)).not.toContain(record.id);
    expect(await listed('/api/v1/gallery?limit=60')).not.toContain(record.id);
    expect((await open(created.id)).status).toBe(410);
    expect((await image(shared.url)).status).toBe(410);
    expect((await storedKeys(record)).length).toBeGreaterThanOrEqual(2);

    const run = await sweep();
    expect(run.purged).toBeGreaterThanOrEqual(1);
    expect(await storedKeys(record)).toEqual([]);
    const after = await usage();
    expect(after.file_count).toBe(before.usage.file_count - 1);
    expect(after.used_bytes).toBe(before.usage.used_bytes - record.size);
  });

  it('takes expires_in or expires_at as a form field and in a presign, and refuses bad values naming them', async () => {
    // Prepare
    const at = new Date(clock().getTime() + 3_600_000);

    // Act
    const byAt = await uploadWith({ expires_at: at.toISOString() });
    const presigned = await call<{ key: string; url: string; headers: Record<string, string> }>('files', {
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: owner.headers,
      body: { mime_type: 'image/png', size: makePng(3, 9, [1, 2, 3]).length, expires_in: 120 },
    });
    const put = await fetch(presigned.body.data.url, {
      method: 'PUT',
      body: makePng(3, 9, [1, 2, 3]),
      headers: { 'Content-Type': 'image/png' },
    });
    const confirmed = await call<UploadRecord>('files', {
      method: 'POST',
      path: '/api/v1/upload/confirm',
      headers: owner.headers,
      body: { key: presigned.body.data.key },
    });
    const refused = await Promise.all(
      (<Array<Record<string, string>>>[
        { expires_in: 'soon' },
        { expires_in: '59' },
        { expires_in: String(11 * 365 * 86_400) },
        { expires_at: 'tomorrow' },
        { expires_at: new Date(clock().getTime() - 1000).toISOString() },
        { expires_in: '60', expires_at: at.toISOString() },
      ]).map(async (fields) => {
        const answer = await uploadWith(fields);
        return `${answer.status} ${answer.body.message.split(':')[0]}`;
      }),
    );
    const badPresign = await call('files', {
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: owner.headers,
      body: { mime_type: 'image/png', size: 10, expires_in: 10 },
    });

    // Assess
    expect(byAt.status, byAt.text).toBe(200);
    expect(byAt.body.data.expires_at).toBe(isoWithOffset(new Date(Math.floor(at.getTime() / 1000) * 1000)));
    expect(put.ok).toBe(true);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.data.key).toBe(presigned.body.data.key);
    expect(confirmed.body.data.key).toMatch(/-x[0-9a-z]{6}\.png$/);
    expect(byAt.body.data.key.endsWith(`-x${Math.floor(at.getTime() / 1000).toString(36)}.png`)).toBe(true);
    expect(Date.parse(confirmed.body.data.expires_at!) - clock().getTime()).toBeGreaterThan(115_000);
    expect(refused).toEqual([
      '400 expires_in',
      '400 expires_in',
      '400 expires_in',
      '400 expires_at',
      '400 expires_at',
      '400 expires_in',
    ]);
    expect(badPresign.status).toBe(400);
    expect(badPresign.body.message).toMatch(/^expires_in: /);
    expect((await upload(owner)).expires_at).toBeNull();
  });
});

describe('the trash', () => {
  it('holds a deleted file (404 everywhere, still counted), restores it with its share link, and empties', async () => {
    // Prepare: its thumbnail rendered and stored.
    const record = await upload(owner);
    const created = await share(owner, { file_id: record.id });
    const counted = await usage();
    const rendered = await rendition(record);
    const storedBefore = await storedKeys(record);

    // Act: delete, then restore.
    const deleted = await remove(`/api/v1/files/${record.id}`);
    const whileTrashed = {
      record: (await get(`/api/v1/files/${record.id}`)).status,
      original: await atEdge(`/i/${record.key}`),
      share: (await open(created.id)).status,
      // Made public while in the trash, it would join the gallery: refused as for no file.
      patched: (
        await call('files', {
          method: 'PATCH',
          path: `/api/v1/files/${record.id}`,
          headers: owner.headers,
          body: { permission: 'public' },
        })
      ).status,
      listed: await listed('/api/v1/files'),
      trash: (await get('/api/v1/files/trash')).body.data as { items: Array<Record<string, unknown>> },
      usage: await usage(),
      stored: await storedKeys(record),
    };
    const restored = await call<UploadRecord>('files', {
      method: 'POST',
      path: `/api/v1/files/${record.id}/restore`,
      headers: owner.headers,
    });
    const reopened = await open(created.id);

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: record.id, deleted: true });
    expect(whileTrashed).toMatchObject({ record: 404, original: 404, share: 410, patched: 404 });
    expect(whileTrashed.listed).not.toContain(record.id);
    expect(whileTrashed.trash.items.map((item) => item.id)).toEqual([record.id]);
    expect(whileTrashed.trash.items[0]).toMatchObject({ key: record.key, trashed_at: expect.any(String) });
    expect(whileTrashed.usage).toEqual(counted);
    // Its object left its key for the trash (so the CDN's edge finds nothing there), its renditions gone;
    // after the restore it is at its key again, the trash copy gone.
    expect(rendered).toBe(200);
    expect(storedBefore).toHaveLength(2);
    expect(whileTrashed.stored).toEqual([trashKey(record.key)]);
    expect(restored.status, restored.text).toBe(200);
    expect(await storedKeys(record)).toEqual([record.key]);
    expect(restored.body.data).toEqual(record);
    expect(await atEdge(`/i/${record.key}`)).toBe(200);
    expect(reopened.status).toBe(200);
    expect((await image(reopened.body.data.items[0]!.url)).status).toBe(200);
    expect(await listed('/api/v1/files')).toContain(record.id);
    expect((await get('/api/v1/files/trash')).body.data).toEqual({ items: [], next_cursor: null });

    // Act: delete again, then empty the trash of it (one file), then of everything.
    const other = await upload(owner);
    await remove(`/api/v1/files/${record.id}`);
    await remove(`/api/v1/files/${other.id}`);
    const one = await remove(`/api/v1/files/trash/${record.id}`);
    const gone = await storedKeys(record);
    const all = await remove('/api/v1/files/trash');

    // Assess: the bytes go at once; the usage down by both.
    expect(one.body.data).toEqual({ id: record.id, deleted: true });
    expect(gone).toEqual([]);
    expect(all.body.data).toEqual({ deleted: 1 });
    expect(await storedKeys(other)).toEqual([]);
    expect(await usage()).toEqual({
      ...counted,
      used_bytes: counted.used_bytes - record.size,
      file_count: counted.file_count - 1,
    });
    expect((await remove(`/api/v1/files/trash/${record.id}`)).status).toBe(404);
  });

  it('lets the same bytes be uploaded again while a copy is in the trash', async () => {
    const first = await uploadWith({});
    await remove(`/api/v1/files/${first.body.data.id}`);

    const again = await uploadWith({});

    expect(again.status, again.text).toBe(200);
    expect(again.body.data.id).not.toBe(first.body.data.id);
    expect(again.body.data.hash).toBe(first.body.data.hash);
  });

  it('is skipped by a takedown, and purged by the sweep past files.trash_days, usage down', async () => {
    // Prepare: an owner of its own, whose usage nothing else in this file moves.
    const third = await createTestAccount();
    const [taken, trashed] = [await upload(third), await upload(third)];
    await remove(`/api/v1/files/${trashed.id}`, third);
    const counted = await usage(third);

    // Act
    const takedown = await remove(`/api/v1/admin/files/${taken.id}`, admin);
    const trash = await listed('/api/v1/files/trash', third);
    const takenKeys = await storedKeys(taken);
    const early = await sweep();
    const kept = await storedKeys(trashed);
    clock.advance((deps.settings.files.trash_days * 86_400 + 1) * 1000);
    await sweep();

    // Assess
    expect(takedown.status).toBe(200);
    expect(trash).toEqual([trashed.id]);
    expect(takenKeys).toEqual([]);
    expect(early.purged).toBe(0);
    expect(kept).toEqual([trashKey(trashed.key)]);
    expect(await storedKeys(trashed)).toEqual([]);
    const usageNow = await deps.quota.usageOf({ id: third.account.id, role: 'user' });
    expect(usageNow.file_count).toBe(counted.file_count - 2);
    expect(usageNow.used_bytes).toBe(counted.used_bytes - taken.size - trashed.size);
  });
});
