// Tags and search (docs/UPLOADS.md "Tags and search") against DynamoDB Local: tags set on upload and
// replaced later, an owner's tag filter and name-prefix search answering exactly their files with one Query
// a page and no Scan (the table calls counted), 400s for bad tags, the look-up items gone with the file,
// and administrators finding any file by its URL, key, id or share link.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { migrateItems } from '#infra/migrate-items.ts';
import { fileNameItems } from '#lib/files/migrations.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { type StackClient, WaitCounter } from '#test/support/aws-waits.ts';
import { testDeps } from '#test/support/deps.ts';
import { buildMultipart, makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { shareHarness } from './share-helpers.ts';

const clock = movableClock();
const deps = testDeps({ clock });
const { call, share } = shareHarness(deps, clock);
const counter = new WaitCounter().install(deps.table.client as unknown as StackClient, 'dynamodb');

let alice: TestAccount;
let bob: TestAccount;
let admin: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob, admin] = await Promise.all([
    createTestAccount(),
    createTestAccount(),
    createTestAccount({ role: 'admin' }),
  ]);
});

type Page = { items: UploadRecord[]; next_cursor: string | null };

let shade = 0;
/** An upload of fresh bytes named `name`, with the form's `tags` field when given. */
async function upload(owner: TestAccount, name: string, tags?: string) {
  shade += 1;
  clock.advance(5);
  const bytes = makePng(4 + (shade % 40), 3, [shade % 256, 99, (shade * 7) % 256]);
  const { body, contentType } = buildMultipart([
    { name: 'file', filename: name, contentType: 'image/png', data: bytes },
    ...(tags === undefined ? [] : [{ name: 'tags', data: tags }]),
  ]);
  return call<UploadRecord>('files', {
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...owner.headers, 'content-type': contentType, 'content-length': String(body.length) },
  });
}

async function uploaded(owner: TestAccount, name: string, tags?: string): Promise<UploadRecord> {
  const answer = await upload(owner, name, tags);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

const list = (owner: TestAccount, query: Record<string, string>) =>
  call<Page>('files', { path: `/api/v1/files?${new URLSearchParams(query)}`, headers: owner.headers });

/** Every page of a listing, the table calls of each counted. */
async function allPages(owner: TestAccount, query: Record<string, string>) {
  const ids: string[] = [];
  const operations: Record<string, number>[] = [];
  let cursor: string | null = null;
  do {
    let answer: Awaited<ReturnType<typeof list>> | undefined;
    const counted = await counter.measure(async () => {
      answer = await list(owner, { ...query, ...(cursor ? { cursor } : {}) });
    });
    expect(answer!.status, answer!.text).toBe(200);
    ids.push(...answer!.body.data.items.map((item) => item.id));
    operations.push(counted.operations);
    cursor = answer!.body.data.next_cursor;
  } while (cursor !== null && operations.length < 20);
  return { ids, operations };
}

const setTags = (owner: TestAccount, id: string, tags: unknown) =>
  call<UploadRecord>('files', {
    method: 'PUT',
    path: `/api/v1/files/${id}/tags`,
    headers: owner.headers,
    body: { tags },
  });

describe('tags and search', () => {
  it('filters by tag (newest first) and searches by name prefix (A to Z), exactly, one Query a page, no Scan', async () => {
    const beach = await uploaded(alice, 'Holiday-Beach.png', ' Cats, summer ,cats,');
    const city = await uploaded(alice, 'holiday-City.png', 'cats');
    const work = await uploaded(alice, 'Work.png', 'SUMMER');
    await uploaded(alice, 'holly.png');
    await uploaded(bob, 'holiday-bob.png', 'cats,summer');

    expect(beach.tags).toEqual(['cats', 'summer']);
    expect(city.tags).toEqual(['cats']);

    const cats = await allPages(alice, { tag: 'Cats', limit: '1' });
    expect(cats.ids).toEqual([city.id, beach.id]);
    expect((await allPages(alice, { tag: 'summer' })).ids).toEqual([work.id, beach.id]);
    const holi = await allPages(alice, { q: 'HOLI', limit: '1' });
    expect(holi.ids).toEqual([beach.id, city.id]);
    expect((await allPages(alice, { q: 'holiday-c' })).ids).toEqual([city.id]);
    expect((await allPages(alice, { q: 'nothing' })).ids).toEqual([]);

    for (const operations of [...cats.operations, ...holi.operations]) {
      // The session's read, the page's Query, its records' batch read (none on an empty last page).
      expect(operations['dynamodb.Scan']).toBeUndefined();
      expect(Object.keys(operations).sort()).toEqual(['dynamodb.BatchGetItem', 'dynamodb.Query']);
      expect(operations['dynamodb.Query']).toBe(1);
      expect(operations['dynamodb.BatchGetItem']).toBeLessThanOrEqual(2);
    }
  });

  it('replaces a file’s tags: the filter follows, the record shows them, another owner’s file is 404', async () => {
    const file = await uploaded(alice, 'retag.png', 'old,kept');
    const changed = await setTags(alice, file.id, ['Kept', 'new-one']);
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data.tags).toEqual(['kept', 'new-one']);
    expect((await allPages(alice, { tag: 'old' })).ids).not.toContain(file.id);
    expect((await allPages(alice, { tag: 'new-one' })).ids).toEqual([file.id]);
    const read = await call<UploadRecord>('files', {
      path: `/api/v1/files/${file.id}`,
      headers: alice.headers,
    });
    expect(read.body.data.tags).toEqual(['kept', 'new-one']);
    expect((await setTags(bob, file.id, ['mine'])).status).toBe(404);
    const cleared = await setTags(alice, file.id, []);
    expect(cleared.body.data.tags).toEqual([]);
    expect((await allPages(alice, { tag: 'kept' })).ids).not.toContain(file.id);
  });

  it('refuses 21 tags and a bad tag with a 400 naming the field, on upload and on change', async () => {
    const many = Array.from({ length: 21 }, (_, n) => `t${n}`);
    const overUpload = await upload(alice, 'many.png', many.join(','));
    expect(overUpload.status).toBe(400);
    expect(overUpload.body.message).toMatch(/^tags: at most 20/);
    const badUpload = await upload(alice, 'bad.png', 'ok,not a tag');
    expect(badUpload.status).toBe(400);
    expect(badUpload.body.message).toMatch(/^tags\[1\]: /);

    const file = await uploaded(alice, 'twenty.png', many.slice(0, 20).join(','));
    expect(file.tags).toHaveLength(20);
    const over = await setTags(alice, file.id, many);
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/^tags: at most 20/);
    expect((await setTags(alice, file.id, ['x'.repeat(33)])).status).toBe(400);
    expect((await list(alice, { tag: 'a b' })).status).toBe(400);
    expect((await list(alice, { tag: 'cats', q: 'holi' })).status).toBe(400);
  });

  it('records the tags a presign names once its upload is confirmed; a bad one is 400 at the presign', async () => {
    const bytes = makePng(61, 7, [1, 2, 3]);
    const presign = (tags: string[]) =>
      call<{ key: string; url: string; headers: Record<string, string> }>('files', {
        method: 'POST',
        path: '/api/v1/upload/presign',
        headers: alice.headers,
        body: { mime_type: 'image/png', size: bytes.length, filename: 'Receipt.png', tags },
      });
    expect((await presign(['ok', 'not ok'])).status).toBe(400);
    const grant = await presign(['Receipts', 'tax-2026']);
    expect(grant.status, grant.text).toBe(200);
    const { url, headers, key } = grant.body.data;
    const put = await fetch(url, {
      method: 'PUT',
      body: bytes,
      headers: { 'Content-Type': headers['Content-Type']! },
    });
    expect(put.ok).toBe(true);
    const confirmed = await call<UploadRecord>('files', {
      method: 'POST',
      path: '/api/v1/upload/confirm',
      headers: alice.headers,
      body: { key },
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.data.tags).toEqual(['receipts', 'tax-2026']);
    expect((await allPages(alice, { tag: 'tax-2026' })).ids).toEqual([confirmed.body.data.id]);
    expect((await allPages(alice, { q: 'receipt' })).ids).toEqual([confirmed.body.data.id]);
  });

  it('finds no file in the trash, and removes the look-up items when the file is deleted for good', async () => {
    const file = await uploaded(alice, 'Doomed.png', 'doomed,gone');
    const trashed = await call('files', {
      method: 'DELETE',
      path: `/api/v1/files/${file.id}`,
      headers: alice.headers,
    });
    expect(trashed.status).toBe(200);
    expect((await allPages(alice, { q: 'doomed' })).ids).toEqual([]);
    expect((await allPages(alice, { tag: 'gone' })).ids).toEqual([]);
    const deleted = await call('files', {
      method: 'DELETE',
      path: `/api/v1/files/trash/${file.id}`,
      headers: alice.headers,
    });
    expect(deleted.status).toBe(200);
    const holding = async (pk: string) => {
      const { Items = [] } = await deps.table.client.send(
        new QueryCommand({
          TableName: deps.table.name,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ConsistentRead: true,
        }),
      );
      return Items.filter((item) => item.file_id === file.id);
    };
    const id = alice.account.id;
    expect(await holding(`filetag#${id}#doomed`)).toEqual([]);
    expect(await holding(`filetag#${id}#gone`)).toEqual([]);
    expect(await holding(`filename#${id}`)).toEqual([]);
    expect((await allPages(alice, { q: 'doomed' })).ids).toEqual([]);
  });
});

describe('files from before names were searched', () => {
  it('are found by name once `npm run migrate:shards` wrote their name items; a second run does nothing', async () => {
    const old = await uploaded(alice, 'Ancient-scroll.png');
    // As written before: no name item, no mark.
    await deps.table.delete({ pk: `filename#${alice.account.id}`, sk: `ancient-scroll.png#${old.id}` });
    await deps.table.update(
      { pk: `file#${old.id}`, sk: 'file' },
      { UpdateExpression: 'REMOVE name_indexed', ConditionExpression: 'attribute_exists(pk)' },
    );
    expect((await allPages(alice, { q: 'ancient' })).ids).toEqual([]);

    const settings = { listingShards: deps.settings.listing_shards };
    const first = await migrateItems(deps.table, settings, { migrations: [fileNameItems] });
    expect(first.migrations['files: name items']).toEqual({ updated: 1, skipped: 0 });
    expect((await allPages(alice, { q: 'ancient' })).ids).toEqual([old.id]);
    const again = await migrateItems(deps.table, settings, { migrations: [fileNameItems] });
    expect(again.migrations['files: name items']).toEqual({ updated: 0, skipped: 0 });
  });
});

describe('GET /api/v1/admin/files/find', () => {
  const find = (ref: string, who = admin) =>
    call<UploadRecord & { owner_id: string }>('files', {
      path: `/api/v1/admin/files/find?${new URLSearchParams({ ref })}`,
      headers: who.headers,
    });

  it('finds any file by its URL, a rendition URL, its key, its id or a share link; a user gets 403', async () => {
    const file = await uploaded(bob, 'evidence.png', 'report');
    const link = await share(bob, { file_id: file.id });
    const refs = [
      file.url,
      file.thumbnail!,
      `${file.url}?w=100&s=abc`,
      file.key,
      `/i/${file.key}`,
      file.id,
      link.url,
    ];
    for (const ref of refs) {
      const found = await find(ref);
      expect(found.status, `${ref}: ${found.text}`).toBe(200);
      expect(found.body.data.id).toBe(file.id);
      expect(found.body.data.owner_id).toBe(bob.account.id);
    }
    expect((await find(file.url, alice)).status).toBe(403);
    const other = file.key.replace(/[0-9a-f](\.png)$/, (digit, ext) => `${digit === '0' ? '1' : '0'}${ext}`);
    for (const ref of [
      other,
      'https://example.com/i/nothing.png',
      'not a ref',
      `https://x/s/${'A'.repeat(32)}`,
    ]) {
      const missing = await find(ref);
      expect(missing.status, ref).toBe(404);
    }
  });
});
