// A share's images through its own door (docs/ALBUMS.md "What a share adds"), through the shares and files
// handlers against DynamoDB Local and s3rver: the links an open gives answer the original and its thumbnail
// while the share is live, and 410 once it is revoked, expired, spent (when the view that spent it has had
// its window) or its album deleted; a password share's links come only with the password; a link is bound
// to its share and file and cannot be forged; fetching images counts no view.
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOwnerRules } from '#lib/files/build-owner-rules.ts';
import { GRANT_WINDOW_SECONDS, SHARE_IMAGE_MAX_AGE_SECONDS } from '#lib/files/share-grants.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { type OpenedItem, type Share, shareHarness } from './share-helpers.ts';

const clock = movableClock();
const deps = testDeps({ clock });
const { call, upload, album, share, open, image } = shareHarness(deps, clock);
const GONE = 'share is no longer available';
/** Past any grant issued now: grants end one to two windows after they are issued. */
const PAST_ANY_GRANT_MS = 2 * GRANT_WINDOW_SECONDS * 1000 + 1000;

let owner: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  owner = await createTestAccount();
});

/** The one item an open of `id` shows (the password given, if any). */
async function openedItem(id: string, body: Record<string, unknown> = {}): Promise<OpenedItem> {
  const opened = await open(id, body);
  expect(opened.status, opened.text).toBe(200);
  return opened.body.data.items[0]!;
}

/** Both links of an item (the original and its thumbnail) answer 200. */
async function bothAnswer(item: OpenedItem) {
  for (const url of [item.url, item.thumbnail!]) expect((await image(url)).status, url).toBe(200);
}

/** Both links of an item answer 410 "share is no longer available". */
async function bothGone(item: OpenedItem, message = GONE) {
  for (const url of [item.url, item.thumbnail!]) {
    const answer = await image(url);
    expect(answer.status, url).toBe(410);
    expect(JSON.parse(answer.text).message).toBe(message);
  }
}

const viewsOf = async (id: string) => {
  const listed = await call<{ items: Share[] }>('shares', {
    path: '/api/v1/shares?limit=100',
    headers: owner.headers,
  });
  return listed.body.data.items.find((item) => item.id === id)?.views;
};

describe("a share's links", () => {
  it('answer the original and its thumbnail, sandboxed, kept a minute at most, and count no view', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id, max_views: 10 });
    const item = await openedItem(created.id);

    const original = await image(item.url);
    const thumbnail = await image(item.thumbnail!);
    await image(item.url);

    expect(original.status).toBe(200);
    expect(original.headers['content-type']).toBe('image/png');
    expect(original.bytes.length).toBe(file.size);
    expect(original.headers['cache-control']).toBe(`public, max-age=${SHARE_IMAGE_MAX_AGE_SECONDS}`);
    expect(original.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers['content-type']).toBe('image/webp');
    expect(thumbnail.bytes.subarray(8, 12).toString()).toBe('WEBP');
    expect(thumbnail.headers['cache-control']).toBe(`public, max-age=${SHARE_IMAGE_MAX_AGE_SECONDS}`);
    expect(await viewsOf(created.id)).toBe(1);
  });

  it('are the same for every viewer within a window (so the CDN can keep them), and new after it', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id });
    const first = await openedItem(created.id);
    expect((await openedItem(created.id)).url).toBe(first.url);

    clock.advance(GRANT_WINDOW_SECONDS * 1000);
    const later = await openedItem(created.id);

    expect(later.url).not.toBe(first.url);
    await bothAnswer(later);
  });

  it('render only the thumbnail the page shows: any other query is 400, its parameters in any order are not', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id });
    const { url } = await openedItem(created.id);

    for (const query of ['w=1080', 'f=avif', 'w=480&q=75&f=avif', 'w=480&q=75&f=webp&x=1'])
      expect((await image(`${url}?${query}`)).status, query).toBe(400);
    expect((await image(`${url}?f=webp&w=480&q=75`)).status).toBe(200);
  });

  it('are bound to their share and file: another share, an edited or a made-up link is 404', async () => {
    const file = await upload(owner);
    const [created, other] = [
      await share(owner, { file_id: file.id }),
      await share(owner, { file_id: file.id }),
    ];
    const { url } = await openedItem(created.id);
    const grant = url.slice(url.lastIndexOf('/') + 1);
    const flipped = `${grant.slice(0, 20)}${grant[20] === 'A' ? 'B' : 'A'}${grant.slice(21)}`;

    for (const path of [
      `/s/${other.id}/i/${grant}`,
      `/s/${created.id}/i/${flipped}`,
      `/s/${created.id}/i/${'A'.repeat(64)}`,
      `/s/${created.id}/i/short`,
      `/s/${'C'.repeat(32)}/i/${grant}`,
    ]) {
      const answer = await call('shares', { path });
      expect(answer.status, path).toBe(404);
    }
  });

  it('of a password share come only with the password', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id, password: 'door-pass-1' });
    const refused = await open(created.id, { password: 'not-it' });
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain(`${created.url}/i/`);
    expect((await call('shares', { path: `/s/${created.id}/random` })).status).toBe(401);

    await bothAnswer(await openedItem(created.id, { password: 'door-pass-1' }));
  });

  it('expire with their window: a live share answers 410 to an old link, and a new open gives a working one', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id });
    const item = await openedItem(created.id);

    clock.advance(PAST_ANY_GRANT_MS);

    await bothGone(item, 'link: this image link has expired; open the share again');
    await bothAnswer(await openedItem(created.id));
  });
});

describe("a share's links of an owner whose files are stopped", () => {
  it('answer 403 while the owner is stopped (past the bandwidth), and 200 again once resumed', async () => {
    const stoppedOwner = await createTestAccount();
    const file = await upload(stoppedOwner);
    const created = await share(stoppedOwner, { file_id: file.id });
    const item = await openedItem(created.id);
    const rules = buildOwnerRules({ table: deps.table, shards: 16 });

    await rules.setStopped(stoppedOwner.account.id, 'bandwidth');
    const stopped = await Promise.all([image(item.url), image(item.thumbnail!)]);
    await rules.setStopped(stoppedOwner.account.id, undefined);
    const resumed = await image(item.url);

    expect(stopped.map((answer) => answer.status)).toEqual([403, 403]);
    expect(stopped[0]!.text).toMatch(/bandwidth/);
    expect(resumed.status).toBe(200);
  });
});

describe("a share's links answer 200, then 410 once the share", () => {
  it('is revoked', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id });
    const item = await openedItem(created.id);
    await bothAnswer(item);

    const revoked = await call('shares', {
      method: 'DELETE',
      path: `/api/v1/shares/${created.id}`,
      headers: owner.headers,
    });

    expect(revoked.status).toBe(200);
    await bothGone(item);
  });

  it('expires (and are kept no longer than it lasts)', async () => {
    const file = await upload(owner);
    const created = await share(owner, {
      file_id: file.id,
      expires_at: new Date(clock().getTime() + 30_000).toISOString(),
    });
    const item = await openedItem(created.id);
    const answer = await image(item.url);
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toMatch(/^public, max-age=(30|29)$/);

    clock.advance(30_001);

    await bothGone(item);
  });

  it('has spent its views, once the window of the view that spent them has passed', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id, max_views: 1 });
    const item = await openedItem(created.id);
    expect((await open(created.id)).status).toBe(410);
    // The last viewer still sees the images that view showed.
    await bothAnswer(item);

    clock.advance(PAST_ANY_GRANT_MS);

    await bothGone(item);
  });

  it('has its album deleted (the files stay, their own links too)', async () => {
    const albumId = await album(owner);
    const file = await upload(owner, { album_id: albumId });
    const created = await share(owner, { album_id: albumId });
    const item = await openedItem(created.id);
    await bothAnswer(item);

    await call('files', { method: 'DELETE', path: `/api/v1/albums/${albumId}`, headers: owner.headers });

    await bothGone(item);
    expect((await call('files', { path: `/api/v1/files/${file.id}`, headers: owner.headers })).status).toBe(
      200,
    );
  });

  it('has its file deleted', async () => {
    const file = await upload(owner);
    const created = await share(owner, { file_id: file.id });
    const item = await openedItem(created.id);
    await bothAnswer(item);

    await call('files', { method: 'DELETE', path: `/api/v1/files/${file.id}`, headers: owner.headers });

    await bothGone(item);
  });
});

describe("an album share's links", () => {
  it('answer 404 for a file moved out of the album, while the others still answer', async () => {
    const albumId = await album(owner);
    const [kept, moved] = [
      await upload(owner, { album_id: albumId }),
      await upload(owner, { album_id: albumId }),
    ];
    const created = await share(owner, { album_id: albumId });
    const opened = await open(created.id);
    const byName = (name: string) => opened.body.data.items.find((item) => item.original_name === name)!;

    await call('files', {
      method: 'PATCH',
      path: `/api/v1/files/${moved.id}`,
      headers: owner.headers,
      body: { album_id: null },
    });

    expect((await image(byName(moved.original_name).url)).status).toBe(404);
    await bothAnswer(byName(kept.original_name));
  });
});
