// Every paged listing (docs/DESIGN.md: `?limit=&cursor=`) takes back only the cursors it gave out: a
// forged one (not JSON, other attributes, another listing's, another account's partition, a key value
// DynamoDB refuses) is a 400 naming the cursor, never a 5xx from a start key DynamoDB could not use.
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGroupHandler } from '#infra/local/app.ts';
import { matchRoute } from '#lib/http/routes.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { uploadInput } from './files/helpers.ts';

interface Answer {
  status: number;
  body: { code: number; message: string; data: { next_cursor?: string | null } | null };
}

/** One request to whichever group serves the route, in process, as API Gateway would send it. */
async function send(input: EventInput): Promise<Answer> {
  const match = matchRoute(input.method ?? 'GET', new URL(input.path, 'http://localhost').pathname);
  if (!match) throw new Error(`no route for ${input.method} ${input.path}`);
  const handler = await loadGroupHandler(match.route.group);
  const result = await handler(apiEvent(input), lambdaContext as Context);
  return { status: result.statusCode ?? 0, body: parseBody(result) } as Answer;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const b64Text = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

let admin: TestAccount;
let alice: TestAccount;
let bob: TestAccount;

/** A listing as one caller reads it; rows of one `listing` hand out and take back the same cursors. */
interface Listing {
  listing: string;
  path: string;
  caller: () => TestAccount;
}

const LISTINGS: Listing[] = [
  { listing: 'files:alice', path: '/api/v1/files', caller: () => alice },
  { listing: 'files:bob', path: '/api/v1/files', caller: () => bob },
  { listing: 'files:bob', path: '/api/v1/admin/files?owner_id={bob}', caller: () => admin },
  { listing: 'gallery', path: '/api/v1/gallery', caller: () => alice },
  { listing: 'all-files', path: '/api/v1/admin/files', caller: () => admin },
  { listing: 'orders:alice', path: '/api/v1/orders', caller: () => alice },
  { listing: 'orders:bob', path: '/api/v1/orders', caller: () => bob },
  { listing: 'all-orders', path: '/api/v1/admin/orders', caller: () => admin },
  { listing: 'accounts', path: '/api/v1/admin/accounts', caller: () => admin },
  { listing: 'accounts', path: '/api/v1/admin/accounts?q=user_', caller: () => admin },
  { listing: 'events:alice', path: '/auth/security/events', caller: () => alice },
  { listing: 'events:bob', path: '/auth/security/events', caller: () => bob },
  // Albums and share links (docs/DESIGN.md 16).
  { listing: 'albums:alice', path: '/api/v1/albums', caller: () => alice },
  { listing: 'album-files:alice', path: '/api/v1/files?album_id={album}', caller: () => alice },
  { listing: 'shares:alice', path: '/api/v1/shares', caller: () => alice },
];

/** Alice's album holding her two files. */
let albumId = '';

function pathOf(row: Listing, query: Record<string, string>): string {
  const url = new URL(
    row.path.replace('{bob}', bob.account.id).replace('{album}', albumId),
    'http://localhost',
  );
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

async function read(row: Listing, query: Record<string, string>): Promise<Answer> {
  return send({ method: 'GET', path: pathOf(row, query), headers: row.caller().headers });
}

/** The cursor each listing gives out after its first item (events have none: forged in their shape). */
const given = new Map<string, string>();

beforeAll(async () => {
  await provisionTestStack();
  [admin, alice, bob] = await Promise.all([
    createTestAccount({ role: 'admin' }),
    createTestAccount(),
    createTestAccount(),
  ]);
  // Two files each (alice's public, so the gallery has two) and two orders each: every listing has a
  // second page.
  let shade = 0;
  for (const [owner, permission] of [
    [alice, 'public'],
    [alice, 'public'],
    [bob, 'private'],
    [bob, 'private'],
  ] as const) {
    shade += 40;
    const bytes = makePng(8, 8, [shade, Date.now() % 256, 7]);
    const input = uploadInput(owner.headers, { bytes }, [{ name: 'permission', data: permission }]);
    const uploaded = await send(input);
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
  }
  const plan = await send({
    method: 'POST',
    path: '/api/v1/admin/plans',
    headers: admin.headers,
    body: { name: 'Cursor plan', amount_cents: 500 },
  });
  expect(plan.status).toBe(201);
  const planId = (plan.body.data as unknown as { id: string }).id;
  for (const buyer of [alice, alice, bob, bob]) {
    const order = await send({
      method: 'POST',
      path: '/api/v1/orders',
      headers: buyer.headers,
      body: { plan_id: planId },
    });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
  }
  // Two albums of alice's, her two files in the first, and two share links.
  for (const name of ['Second', 'First']) {
    const album = await send({
      method: 'POST',
      path: '/api/v1/albums',
      headers: alice.headers,
      body: { name },
    });
    expect(album.status).toBe(201);
    albumId = (album.body.data as unknown as { id: string }).id;
  }
  const mine = await send({ method: 'GET', path: '/api/v1/files', headers: alice.headers });
  for (const file of (mine.body.data as unknown as { items: Array<{ id: string }> }).items) {
    const moved = await send({
      method: 'PATCH',
      path: `/api/v1/files/${file.id}`,
      headers: alice.headers,
      body: { album_id: albumId },
    });
    expect(moved.status).toBe(200);
    const shared = await send({
      method: 'POST',
      path: '/api/v1/shares',
      headers: alice.headers,
      body: { file_id: file.id },
    });
    expect(shared.status).toBe(201);
  }
  for (const row of LISTINGS) {
    if (given.has(row.listing) || row.listing.startsWith('events:')) continue;
    const page = await read(row, { limit: '1' });
    expect(page.status, row.path).toBe(200);
    const cursor = page.body.data?.next_cursor;
    expect(cursor, `${row.listing} has a second page`).toEqual(expect.any(String));
    given.set(row.listing, cursor!);
  }
  // An account's events in the shape the listing gives out (its partition, an event's sort key).
  for (const [name, account] of [
    ['events:alice', alice],
    ['events:bob', bob],
  ] as const) {
    given.set(name, b64({ pk: `account#${account.account.id}`, sk: 'event#2026-01-01T00:00:00.000Z#x' }));
  }
}, 120_000);

/** Near misses of a real cursor: each changes one thing a forger could. */
function nearMisses(cursor: string): Array<[string, string]> {
  const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (Array.isArray(value)) {
    const [listing, after, done] = value as [string, string, number[]];
    return [
      ['another listing name', b64(['files#private', after, done])],
      ['an empty position', b64([listing, '', done])],
      ['a position over 1,024 bytes', b64([listing, 'é'.repeat(600), done])],
      ['a position that is not UTF-16', b64([listing, '\uD800', done])],
      ['a position that is a number', b64([listing, 7, done])],
      ['a shard past the last', b64([listing, after, [999]])],
      ['a fourth element', b64([listing, after, done, 'x'])],
      ['an object instead', b64({ listing, after, done })],
    ];
  }
  const key = value as Record<string, string>;
  const position = ['gsi1sk', 'gsi3sk'].find((name) => name in key) ?? 'sk';
  const partition = ['gsi1pk', 'gsi3pk'].find((name) => name in key) ?? 'pk';
  return [
    ['an extra attribute', b64({ ...key, extra: 'x' })],
    ['a missing attribute', b64(Object.fromEntries(Object.entries(key).slice(1)))],
    ['an empty position', b64({ ...key, [position]: '' })],
    ['a position over 1,024 bytes', b64({ ...key, [position]: 'é'.repeat(600) })],
    ['a position that is not UTF-16', b64({ ...key, [position]: '\uD800' })],
    ['a position that is a number', b64({ ...key, [position]: 7 })],
    ['another partition', b64({ ...key, [partition]: `${key[partition]}x` })],
    ['a table key of another kind', b64({ ...key, pk: 'account#x', sk: 'account' })],
    ['an array instead', b64(Object.values(key))],
  ];
}

/** Cursors no listing ever gives out. */
const FORGED: Array<[string, string]> = [
  ['not base64url JSON', 'not-a-cursor'],
  ['base64url of text', b64Text('hello')],
  ['JSON null', b64Text('null')],
  ['a JSON string', b64('x')],
  ['a JSON number', b64Text('1e309')],
  ['an empty object', b64({})],
  ['an empty array', b64([])],
  ['__proto__', b64Text('{"__proto__":{"pk":"x"},"pk":"a","sk":"b"}')],
  ['numbers for keys', b64({ pk: 1, sk: 2 })],
  ['nested values', b64({ pk: { S: 'x' }, sk: { S: 'y' } })],
  ['huge garbage', 'A'.repeat(2048)],
  ['huge JSON', b64({ pk: 'x'.repeat(1500) })],
  ['over the length limit', 'A'.repeat(2049)],
];

describe('a forged cursor on every listing', () => {
  // Every listing of the service in turn (more with each capability): a minute, not the default 20 s.
  it('is a 400 naming the cursor, and the listing still pages with its own', {
    timeout: 60_000,
  }, async () => {
    const failures: string[] = [];
    for (const row of LISTINGS) {
      const own = given.get(row.listing)!;
      const cases: Array<[string, string]> = [
        ...FORGED,
        ...nearMisses(own),
        // Another listing's cursor (another account's included); rows of one listing share theirs.
        ...[...given.entries()]
          .filter(([listing]) => listing !== row.listing)
          .map(([listing, cursor]): [string, string] => [`the cursor of ${listing}`, cursor]),
      ];
      for (const [label, cursor] of cases) {
        const answer = await read(row, { limit: '1', cursor });
        const message = answer.body.message ?? '';
        if (answer.status !== 400 || !message.startsWith('query.cursor:')) {
          failures.push(`${row.path} (${row.listing}) with ${label}: ${answer.status} ${message}`);
        }
      }
      // The listing's own cursor is taken (events: its shape, on a page past every event).
      const next = await read(row, { limit: '1', cursor: own });
      if (next.status !== 200) failures.push(`${row.path} with its own cursor: ${next.status}`);
    }
    expect(failures).toEqual([]);
  });
});
