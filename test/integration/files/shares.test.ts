// Share links (docs/DESIGN.md 16) through the shares and files handlers against DynamoDB Local and s3rver:
// the share's fields, opening a file or an album's current files (the share's own image links only),
// exactly k of 50 concurrent opens with max_views k, passwords (401, then 429 after 10 wrong from one
// address, never for another address), and every 410: expired, revoked, out of views, file deleted, album
// deleted, file taken down by an administrator. Also the page and the redirect. The image links themselves:
// share-images.test.ts.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import type { StackClient } from '#test/support/aws-waits.ts';
import { testDeps } from '#test/support/deps.ts';
import { jsonBody, RUNS, rawBody, SEED } from '#test/support/hostile-fuzz.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { type Share, shareHarness } from './share-helpers.ts';

const clock = movableClock();
const deps = testDeps({ clock });
const SHARE_PASSWORD = 'share-pass-1';
const { call, upload, album, share, open, image } = shareHarness(deps, clock);

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
        'name',
        'url',
        'views',
      ].sort(),
    );
    expect(created).toMatchObject({
      file_id: file.id,
      album_id: null,
      name: file.original_name,
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
    const first = await share(owner, { file_id: file.id, max_views: 10 });
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
    // Each names what it shares (two links to one file: one read of its name).
    expect(listed.body.data.items.map((item) => item.name)).toEqual([file.original_name, file.original_name]);
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
      // An unlimited share's views are not counted per request (docs/ALBUMS.md).
      views: 0,
    });
    const url = answer.body.data.items[0]?.url ?? '';
    expect(answer.body.data.items).toEqual([
      {
        url,
        thumbnail: `${url}?w=480&q=75&f=webp`,
        original_name: file.original_name,
        mime_type: 'image/png',
        size: file.size,
        width: file.width,
        height: file.height,
      },
    ]);
    // The share's own link, never the file's /i/<key>; no field carries an id.
    expect(url).toMatch(new RegExp(`^${created.url}/i/[A-Za-z0-9_-]{64}$`));
    expect(JSON.stringify(answer.body.data.items)).not.toMatch(/"(id|file_id|key|hash|owner_id|filename)":/);
    // A file's own link begins `/i/<year>/`; a share's grant (letters, digits, - and _) may begin with a digit.
    const ownLink = `/i/${file.key.split('/')[0]}/`;
    for (const secret of [file.key, file.id, file.hash, alice.account.id, ownLink])
      expect(answer.text).not.toContain(secret);
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
    expect(answer.body.data.items.map((item) => item.original_name)).toEqual([
      later.original_name,
      first.original_name,
    ]);
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

  it('lets exactly 50 of 200 concurrent opens through with max_views 50; the other 150 are 410', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, max_views: 50 });

    const answers = await Promise.all(Array.from({ length: 200 }, () => open(created.id)));

    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 410)).toHaveLength(150);
  });

  it("writes nothing to the table for an unlimited share's views and reads it once per page", async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id });
    const calls = countShareCalls(created.id);
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => open(created.id)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      expect(calls.writes).toBe(0);
      calls.reads = 0;
      const page = await call('shares', { path: `/s/${created.id}` });
      expect(page.status).toBe(200);
      expect(calls).toMatchObject({ reads: 1, writes: 0 });
    } finally {
      calls.stop();
    }
  });

  it('answers 404 for an unknown id', async () => {
    for (const id of ['A'.repeat(32), 'short', '..%2F..']) expect((await open(id)).status).toBe(404);
  });
});

describe('share passwords', () => {
  it('answers 401 without or with a wrong password, and the share with the right one', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD, max_views: 10 });
    expect(created.has_password).toBe(true);

    const missing = await open(created.id);
    const wrong = await open(created.id, { password: 'not-it' });
    const right = await open(created.id, { password: SHARE_PASSWORD });

    expect(missing.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(right.status).toBe(200);
    expect(right.body.data.share.views).toBe(1);
  });

  it('answers 429 with Retry-After after 10 wrong passwords from an address, even to its right one, until the back-off passes', async () => {
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

  it('never locks the right password out for another address: 60 wrong at once from one, then another opens it', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    const attacker = '198.51.100.23';

    const guesses = await Promise.all(
      Array.from({ length: 60 }, (_, n) => open(created.id, { password: `guess-${n}` }, attacker)),
    );
    const statuses = guesses.map((answer) => answer.status);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    // The guard evaluates at most 10 of them; the rest wait without a hash.
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(50);

    const visitor = await open(created.id, { password: SHARE_PASSWORD }, '192.0.2.44');
    expect(visitor.status, visitor.text).toBe(200);
    expect(visitor.body.data.items).toHaveLength(1);
    expect((await image(visitor.body.data.items[0]!.url)).status).toBe(200);

    const stillHeld = await open(created.id, { password: SHARE_PASSWORD }, attacker);
    expect(stillHeld.status).toBe(429);
    expect(Number(stillHeld.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('counts an IPv6 visitor by its /64: another address of that network waits too, another network does not', async () => {
    const file = await upload(alice);
    const created = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const answer = await open(created.id, { password: `guess-${attempt}` }, `2001:db8:7:1::${attempt + 1}`);
      expect(answer.status).toBe(401);
    }

    expect((await open(created.id, { password: SHARE_PASSWORD }, '2001:db8:7:1::ff')).status).toBe(429);
    expect((await open(created.id, { password: SHARE_PASSWORD }, '2001:db8:7:2::1')).status).toBe(200);
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
  it('may be kept a minute by anyone when it has no password and no view limit; else never, and never past its end', async () => {
    const file = await upload(alice);
    const open = await share(alice, { file_id: file.id });
    const locked = await share(alice, { file_id: file.id, password: 'correct horse battery' });
    const ending = await share(alice, {
      file_id: file.id,
      expires_at: new Date(clock().getTime() + 20_000).toISOString(),
    });

    const [openPage, lockedPage, endingPage] = await Promise.all(
      [open, locked, ending].map((made) => call('shares', { path: `/s/${made.id}` })),
    );
    if (!openPage || !lockedPage || !endingPage) throw new Error('three answers');

    expect(openPage.headers['cache-control']).toBe('public, max-age=60');
    expect(lockedPage.status).toBe(401);
    expect(lockedPage.headers['cache-control']).toBe('no-store');
    const endingAge = Number(/max-age=(\d+)/.exec(endingPage.headers['cache-control'] ?? '')?.[1]);
    expect(endingAge).toBeGreaterThan(0);
    expect(endingAge).toBeLessThanOrEqual(20);
  });

  it('renders the album without script, under its own policy, and counts a view', async () => {
    const albumId = await album(alice, 'Cats <script>alert(1)</script>');
    const file = await upload(alice, { album_id: albumId });
    await upload(alice, { album_id: albumId });
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
    expect(page.text).toMatch(
      new RegExp(`<img src="${created.url}/i/[A-Za-z0-9_-]{64}\\?w=480&amp;q=75&amp;f=webp"`),
    );
    expect(page.text).not.toContain(file.key);
    // Each image has a Report link to the console's report page naming its link; the album's page has none
    // (the API takes an image's link, not an album's).
    const consoleUrl = `${deps.settings.base_url.replace(/\/+$/, '')}/#/report?url=`;
    const reports = [...page.text.matchAll(/<a class="report" href="([^"]+)"/g)].map((match) => match[1]!);
    expect(reports).toHaveLength(2);
    expect(reports[0]!.startsWith(consoleUrl)).toBe(true);
    expect(decodeURIComponent(reports[0]!.slice(consoleUrl.length))).toMatch(
      new RegExp(`^${created.url}/i/[A-Za-z0-9_-]{64}$`),
    );
    expect((await open(created.id)).body.data.share.views).toBe(2);
  });

  it("gives a file's share page its one photo large, the end as a date and a Report link naming the page", async () => {
    const created = await share(alice, {
      file_id: (await upload(alice)).id,
      expires_at: new Date(clock().getTime() + 3 * 86_400_000).toISOString(),
    });
    const page = await call('shares', { path: `/s/${created.id}` });
    const base = deps.settings.base_url.replace(/\/+$/, '');
    // The original itself (a small file, answered inline), not a grid's thumbnail card.
    expect(page.text).toMatch(
      new RegExp(`<figure class="single"><a href="([^"]+)"><img src="${created.url}/i/[A-Za-z0-9_-]{64}"`),
    );
    expect(page.text).toMatch(
      /available until <time datetime="[^"]+">\d{1,2} \w+ \d{4} at \d{2}:\d{2} UTC<\/time>/,
    );
    expect(page.text).toContain(
      `href="${base}/#/report?url=${encodeURIComponent(created.url)}" aria-label="Report this share"`,
    );
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
    expect(right.text).toContain(`<img src="${created.url}/i/`);
    expect(right.text).not.toContain(file.key);
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
    const created = await share(alice, { album_id: albumId, max_views: 100 });
    const seen = new Set<string>();
    for (let attempt = 0; attempt < 12; attempt += 1) {
      const answer = await call('shares', { path: `/s/${created.id}/random` });
      expect(answer.status).toBe(302);
      expect(answer.headers['cache-control']).toBe('no-store');
      seen.add(answer.headers.location ?? '');
    }
    // The share's own links, which answer the files' bytes.
    for (const url of seen) {
      expect(url.startsWith(`${created.url}/i/`)).toBe(true);
      const bytes = await image(url);
      expect(bytes.status).toBe(200);
      expect(files.map((file) => file.size)).toContain(bytes.bytes.length);
    }
    expect((await open(created.id)).body.data.share.views).toBe(13);
  });

  it('answers 401 for a share with a password, and 410 once the views are spent', async () => {
    const file = await upload(alice);
    const locked = await share(alice, { file_id: file.id, password: SHARE_PASSWORD });
    expect((await call('shares', { path: `/s/${locked.id}/random` })).status).toBe(401);
    const once = await share(alice, { file_id: file.id, max_views: 1 });
    const location = (await call('shares', { path: `/s/${once.id}/random` })).headers.location ?? '';
    expect(location.startsWith(`${once.url}/i/`)).toBe(true);
    expect((await image(location)).status).toBe(200);
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

/** The table calls that touch one share's item (its reads and its writes), from a middleware on the client. */
function countShareCalls(id: string) {
  const name = `share-calls-${id}`;
  const stack = (deps.table.client as unknown as StackClient).middlewareStack;
  const calls = { reads: 0, writes: 0, stop: () => stack.remove(name) };
  stack.add(
    (next: (args: { input: unknown }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: unknown }) => {
        if (JSON.stringify(args.input).includes(`share#${id}`)) {
          if (/^(Get|BatchGet|Query)/.test(context.commandName ?? '')) calls.reads += 1;
          else calls.writes += 1;
        }
        return next(args);
      },
    { step: 'initialize', name },
  );
  return calls;
}
