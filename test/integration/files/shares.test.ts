// Share links (docs/DESIGN.md 16) through the auth and upload handlers against DynamoDB Local and s3rver:
// the share's fields, opening a file or an album's current files (URLs only), exactly k of 50 concurrent
// opens with max_views k, passwords (401, then 429 after 10 wrong), and every 410: expired, revoked, out of
// views, file deleted, album deleted, file taken down by an administrator. Also the page and the redirect.
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { jsonBody, RUNS, rawBody, SEED } from '#test/support/hostile-fuzz.ts';
import { buildMultipart, makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const clock = movableClock();
const deps = testDeps({ clock });
const SHARE_PASSWORD = 'share-pass-1';

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
}
interface Share {
  id: string;
  url: string;
  file_id: string | null;
  album_id: string | null;
  has_password: boolean;
  expires_at: string | null;
  max_views: number | null;
  views: number;
  created_at: string;
}
interface Opened {
  share: {
    id: string;
    has_password: boolean;
    expires_at: string | null;
    max_views: number | null;
    views: number;
  };
  album: { name: string; description: string } | null;
  items: Array<Record<string, unknown>>;
}

async function call<T = unknown>(group: 'shares' | 'files', input: EventInput) {
  const result = await deps.handlers[group](apiEvent(input), lambdaContext as Context);
  const headers = (result.headers ?? {}) as Record<string, string>;
  const raw = result.isBase64Encoded
    ? Buffer.from(result.body ?? '', 'base64').toString()
    : (result.body ?? '');
  const json = (headers['content-type'] ?? '').includes('json');
  return {
    status: result.statusCode ?? 0,
    headers,
    text: raw,
    body: (json ? parseBody(result) : undefined) as Envelope<T>,
  };
}

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

let shade = 0;
async function upload(owner: TestAccount, fields: Record<string, string> = {}): Promise<UploadRecord> {
  shade += 1;
  // The clock stands still unless moved: newest-first listings need distinct times.
  clock.advance(5);
  const bytes = makePng(3 + (shade % 50), 2 + Math.floor(shade / 50), [shade % 256, 17, (shade * 5) % 256]);
  const { body, contentType } = buildMultipart([
    { name: 'file', filename: `photo-${shade}.png`, contentType: 'image/png', data: bytes },
    ...Object.entries(fields).map(([name, data]) => ({ name, data })),
  ]);
  const answer = await call<UploadRecord>('files', {
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...owner.headers, 'content-type': contentType, 'content-length': String(body.length) },
  });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

async function album(owner: TestAccount, name = 'Shared album', description = 'For friends') {
  const answer = await call<{ id: string }>('files', {
    method: 'POST',
    path: '/api/v1/albums',
    headers: owner.headers,
    body: { name, description },
  });
  expect(answer.status).toBe(201);
  return answer.body.data.id;
}

async function share(owner: TestAccount, body: Record<string, unknown>) {
  const answer = await call<Share>('shares', {
    method: 'POST',
    path: '/api/v1/shares',
    headers: owner.headers,
    body,
  });
  expect(answer.status, answer.text).toBe(201);
  return answer.body.data;
}

const open = (id: string, body: Record<string, unknown> = {}) =>
  call<Opened>('shares', { method: 'POST', path: `/api/v1/shares/${id}/open`, body });

describe('creating and listing shares', () => {
  it('answers the fields of DESIGN 16, a page URL and an id of at least 128 random bits', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, max_views: 3 });
    expect(Object.keys(created).sort()).toEqual(
      [
        'album_id',
        'created_at',
        'expires_at',
        'file_id',
        'has_password',
        'id',
        'max_views',
        'url',
        'views',
      ].sort(),
    );
    expect(created).toMatchObject({
      file_id: file.id,
      album_id: null,
      has_password: false,
      max_views: 3,
      views: 0,
    });
    expect(created.url).toBe(`${deps.settings.base_url.replace(/\/+$/, '')}/s/${created.id}`);
    // base64url: 6 bits a character.
    expect(created.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(created.id.length * 6).toBeGreaterThanOrEqual(128);
  });

  it.each([
    ['neither file_id nor album_id', { file_id: null }],
    ['both file_id and album_id', { file_id: 'a', album_id: 'b' }],
    ['max_views 0', { max_views: 0 }],
    ['max_views not a whole number', { max_views: 1.5 }],
    ['an expiry in the past', { expires_at: '2001-01-01T00:00:00+00:00' }],
    ['an expiry that is not a time', { expires_at: 'tomorrow' }],
    ['an empty password', { password: '' }],
    ['a password over 128 characters', { password: 'p'.repeat(129) }],
  ])('refuses %s with a 400', async (_, extra) => {
    const file = await upload(alice);
    const body = Object.keys(extra).some((key) => key.endsWith('_id'))
      ? extra
      : { file_id: file.id, ...extra };
    const answer = await call('shares', {
      method: 'POST',
      path: '/api/v1/shares',
      headers: alice.headers,
      body,
    });
    expect(answer.status, answer.text).toBe(400);
  });

  it("answers 404 for another account's file or album, and for a share without a session 401", async () => {
    const theirs = await upload(bob);
    const theirAlbum = await album(bob);
    for (const body of [{ file_id: theirs.id }, { album_id: theirAlbum }]) {
      const answer = await call('shares', {
        method: 'POST',
        path: '/api/v1/shares',
        headers: alice.headers,
        body,
      });
      expect(answer.status).toBe(404);
    }
    const anonymous = await call('shares', {
      method: 'POST',
      path: '/api/v1/shares',
      body: { file_id: theirs.id },
    });
    expect(anonymous.status).toBe(401);
  });

  it("lists the caller's shares only, newest first, with their views; never a password or its hash", async () => {
    const owner = await createTestAccount();
    const file = await upload(owner);
    const first = await share(owner, { file_id: file.id });
    clock.advance(1000);
    const second = await share(owner, { file_id: file.id, password: SHARE_PASSWORD });
    await share(bob, { file_id: (await upload(bob)).id });
    await open(first.id);

    const listed = await call<{ items: Share[] }>('shares', {
      path: '/api/v1/shares',
      headers: owner.headers,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.map((item) => item.id)).toEqual([second.id, first.id]);
    expect(listed.body.data.items[1]!.views).toBe(1);
    expect(listed.body.data.items[0]!.has_password).toBe(true);
    expect(listed.text).not.toContain('argon2');
    expect(listed.text).not.toContain(SHARE_PASSWORD);
  });
});

describe('opening a share', () => {
  it('shows a file by URL only: no id, hash, key or owner', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id });
    const answer = await open(created.id);
    expect(answer.status).toBe(200);
    expect(answer.body.data.album).toBeNull();
    expect(answer.body.data.share).toEqual({
      id: created.id,
      has_password: false,
      expires_at: null,
      max_views: null,
      views: 1,
    });
    expect(answer.body.data.items).toEqual([
      {
        url: file.url,
        thumbnail: file.thumbnail,
        original_name: file.original_name,
        mime_type: 'image/png',
        size: file.size,
        width: file.width,
        height: file.height,
      },
    ]);
    // The URL names the stored file (its key), as every file URL does; no field carries an id.
    expect(JSON.stringify(answer.body.data.items)).not.toMatch(/"(id|file_id|key|hash|owner_id|filename)":/);
    expect(answer.text).not.toContain(file.hash);
    expect(answer.text).not.toContain(alice.account.id);
  });

  it("shows an album's current files, private ones included, newest first", async () => {
    const albumId = await album(alice, 'Summer', 'Beach days');
    const first = await upload(alice, { album_id: albumId });
    const created = await share(alice, { album_id: albumId });
    const later = await upload(alice, { album_id: albumId, permission: 'private' });
    const movedOut = await upload(alice, { album_id: albumId });
    await call('files', {
      method: 'PATCH',
      path: `/api/v1/files/${movedOut.id}`,
      headers: alice.headers,
      body: { album_id: null },
    });

    const answer = await open(created.id);
    expect(answer.status).toBe(200);
    expect(answer.body.data.album).toEqual({ name: 'Summer', description: 'Beach days' });
    expect(answer.body.data.items.map((item) => item.url)).toEqual([later.url, first.url]);
  });

  it('lets exactly 5 of 50 concurrent opens through with max_views 5; the other 45 are 410', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, max_views: 5 });

    const answers = await Promise.all(Array.from({ length: 50 }, () => open(created.id)));

    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 410)).toHaveLength(45);
    for (const refused of answers.filter((answer) => answer.status === 410)) {
      expect(refused.body.message).toBe('share is no longer available');
    }
    const views = answers
      .filter((answer) => answer.status === 200)
      .map((answer) => answer.body.data.share.views);
    expect(views.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('answers 404 for an unknown id', async () => {
    for (const id of ['A'.repeat(32), 'short', '..%2F..']) expect((await open(id)).status).toBe(404);
  });
});

describe('share passwords', () => {
  it('answers 401 without or with a wrong password, and the share with the right one', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    expect(created.has_password).toBe(true);

    const missing = await open(created.id);
    const wrong = await open(created.id, { password: 'not-it' });
    const right = await open(created.id, { password: SHARE_PASSWORD });

    expect(missing.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(right.status).toBe(200);
    expect(right.body.data.share.views).toBe(1);
  });

  it('answers 429 with Retry-After after 10 wrong passwords, even to the right one, until the back-off passes', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect((await open(created.id, { password: `guess-${attempt}` })).status).toBe(401);
    }

    const locked = await open(created.id, { password: SHARE_PASSWORD });

    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(61_000);
    expect((await open(created.id, { password: SHARE_PASSWORD })).status).toBe(200);
  });
});

describe('a share that ended answers 410 "share is no longer available"', () => {
  const gone = async (id: string) => {
    const answer = await open(id);
    expect(answer.status).toBe(410);
    expect(answer.body.message).toBe('share is no longer available');
  };

  it('once expired', async () => {
    const file = await upload(alice);
    const created = await share(alice, {
      file_id: file.id,
      expires_at: new Date(clock().getTime() + 3_600_000).toISOString(),
    });
    expect((await open(created.id)).status).toBe(200);
    clock.advance(3_600_001);
    await gone(created.id);
  });

  it("once revoked (and it leaves the owner's list); another account cannot revoke it", async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id });
    const stranger = await call('shares', {
      method: 'DELETE',
      path: `/api/v1/shares/${created.id}`,
      headers: bob.headers,
    });
    expect(stranger.status).toBe(404);
    expect((await open(created.id)).status).toBe(200);

    const revoked = await call('shares', {
      method: 'DELETE',
      path: `/api/v1/shares/${created.id}`,
      headers: alice.headers,
    });

    expect(revoked.status).toBe(200);
    await gone(created.id);
    const listed = await call<{ items: Share[] }>('shares', {
      path: '/api/v1/shares?limit=100',
      headers: alice.headers,
    });
    expect(listed.body.data.items.map((item) => item.id)).not.toContain(created.id);
  });

  it('once its view limit is reached', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, max_views: 1 });
    expect((await open(created.id)).status).toBe(200);
    await gone(created.id);
  });

  it('once its file is deleted by its owner', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id });
    await call('files', { method: 'DELETE', path: `/api/v1/files/${file.id}`, headers: alice.headers });
    await gone(created.id);
  });

  it('once its file is taken down by an administrator', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id });
    const takedown = await call('files', {
      method: 'DELETE',
      path: `/api/v1/admin/files/${file.id}`,
      headers: admin.headers,
    });
    expect(takedown.status).toBe(200);
    await gone(created.id);
  });

  it('once its album is deleted (its files stay)', async () => {
    const albumId = await album(alice);
    const file = await upload(alice, { album_id: albumId });
    const created = await share(alice, { album_id: albumId });
    await call('files', { method: 'DELETE', path: `/api/v1/albums/${albumId}`, headers: alice.headers });
    await gone(created.id);
    expect((await call('files', { path: `/api/v1/files/${file.id}`, headers: alice.headers })).status).toBe(
      200,
    );
  });
});

describe('GET /s/{id}: the page', () => {
  it('renders the album without script, under its own policy, and counts a view', async () => {
    const albumId = await album(alice, 'Cats <script>alert(1)</script>');
    const file = await upload(alice, { album_id: albumId });
    const created = await share(alice, { album_id: albumId, max_views: 2 });

    const page = await call('shares', { path: `/s/${created.id}` });

    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-store');
    const csp = page.headers['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect(page.text).not.toMatch(/<script/i);
    expect(page.text).toContain('Cats &lt;script&gt;');
    expect(page.text).toContain(file.thumbnail!.replaceAll('&', '&amp;'));
    expect((await open(created.id)).body.data.share.views).toBe(2);
  });

  it('shows the password form (401), which posts to itself and then shows the share', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    const form = await call('shares', { path: `/s/${created.id}` });
    expect(form.status).toBe(401);
    expect(form.text).toContain(`<form method="post" action="/s/${created.id}">`);

    const post = (password: string) =>
      call('shares', {
        method: 'POST',
        path: `/s/${created.id}`,
        body: `password=${encodeURIComponent(password)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    const wrong = await post('nope');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That password is wrong');
    const right = await post(SHARE_PASSWORD);
    expect(right.status).toBe(200);
    expect(right.text).toContain(file.thumbnail!.replaceAll('&', '&amp;'));
    expect(right.text).not.toContain(SHARE_PASSWORD);
  });

  it('answers 404 and 410 as pages', async () => {
    expect((await call('shares', { path: `/s/${'B'.repeat(32)}` })).status).toBe(404);
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, max_views: 1 });
    await open(created.id);
    const ended = await call('shares', { path: `/s/${created.id}` });
    expect(ended.status).toBe(410);
    expect(ended.text).toContain('no longer available');
  });
});

describe('GET /s/{id}/random', () => {
  it("redirects (302, no-store) to one of the album's images and counts a view", async () => {
    const albumId = await album(alice);
    const files = [await upload(alice, { album_id: albumId }), await upload(alice, { album_id: albumId })];
    const created = await share(alice, { album_id: albumId });
    const seen = new Set<string>();
    for (let attempt = 0; attempt < 12; attempt += 1) {
      const answer = await call('shares', { path: `/s/${created.id}/random` });
      expect(answer.status).toBe(302);
      expect(answer.headers['cache-control']).toBe('no-store');
      seen.add(answer.headers.location ?? '');
    }
    expect([...seen].every((url) => files.some((file) => file.url === url))).toBe(true);
    expect((await open(created.id)).body.data.share.views).toBe(13);
  });

  it('answers 401 for a share with a password, and 410 once the views are spent', async () => {
    const file = await upload(alice);
    const locked = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    expect((await call('shares', { path: `/s/${locked.id}/random` })).status).toBe(401);
    const once = await share(alice, { file_id: file.id, max_views: 1 });
    expect((await call('shares', { path: `/s/${once.id}/random` })).headers.location).toBe(file.url);
    expect((await call('shares', { path: `/s/${once.id}/random` })).status).toBe(410);
  });
});

describe('hostile input to a real share', () => {
  it('answers random and malformed bodies to its open and its page with no 5xx, and never opens it', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    const routes = [`/api/v1/shares/${created.id}/open`, `/s/${created.id}`];

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.oneof(jsonBody(['password']), rawBody),
        async (path, body) => {
          const answer = await call('shares', {
            method: 'POST',
            path,
            body: body.bytes,
            headers: body.contentType ? { 'content-type': body.contentType } : {},
          });
          expect(answer.status, `${path} ${answer.text.slice(0, 200)}`).toBeLessThan(500);
          expect([400, 401, 413, 415, 429]).toContain(answer.status);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED },
    );
    // Nothing opened it: no view was counted.
    const listed = await call<{ items: Share[] }>('shares', {
      path: '/api/v1/shares?limit=100',
      headers: alice.headers,
    });
    expect(listed.body.data.items.find((item) => item.id === created.id)?.views).toBe(0);
  });
});
