// The static upload token's owner has no constant partition (docs/CAPACITY.md "Partition keys"): its
// uploads' listing entries, usage counters and rate items are spread over partition keys of their own, and
// its listing still reads newest first, complete, in cursor pages, files from before the shards included.
import { vi } from 'vitest';

const STATIC_TOKEN = vi.hoisted(() => {
  const token = 'static-upload-token-spread-0001';
  process.env.UPLOAD__API_TOKEN = token;
  // Far above what this file sends: the rate is spread (8 buckets), never reached.
  process.env.UPLOAD__API_TOKEN_RATE__PER_MINUTE = '60000';
  process.env.UPLOAD__API_TOKEN_RATE__BURST = '6000';
  return token;
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateItems } from '#infra/migrate-items.ts';
import { FileRepository, fileKey, newFileItem } from '#lib/files/files.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { predict } from '#test/perf/heat-model.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { type TestDeps, testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { HeatRecorder, type KeyHeat } from '#test/support/partition-heat.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, type Envelope, uniquePng, uploadInput } from './helpers.ts';

const UPLOADS = 96;
type FilePageBody = { items: UploadRecord[]; next_cursor: string | null };
const recorder = new HeatRecorder();
let deps: TestDeps;
let ownerId: string;
let uploaded: UploadRecord[];

async function call<T>(input: Parameters<typeof apiEvent>[0]) {
  const result = await deps.handlers.files(apiEvent(input), lambdaContext as never);
  return { status: result.statusCode ?? 0, body: parseBody(result) as Envelope<T> };
}

beforeAll(async () => {
  await provisionTestStack();
  deps = testDeps({ staticUploadToken: STATIC_TOKEN });
  await createTestAccount({ role: 'admin' });
  recorder.install(deps.table.client as never);
  uploaded = [];
  // Eight clients at once, as many machines share the one token.
  const queue = Array.from({ length: UPLOADS }, (_, n) => n);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        const answer = await recorder.track('upload-static', `static-client-${n}`, () =>
          call<UploadRecord>(uploadInput(bearer(STATIC_TOKEN), { bytes: uniquePng(makePng).bytes })),
        );
        expect(answer.status).toBe(200);
        uploaded.push(answer.body.data);
      }
    }),
  );
  recorder.uninstall();
  ownerId = String((await deps.table.get(fileKey(uploaded[0]!.id)))?.owner_id);
}, 120_000);

afterAll(() => recorder.uninstall());

/** The keys that took every static-token upload before: the owner's listing, usage and the token's rate. */
function ownerKeys(): KeyHeat[] {
  return recorder
    .keys()
    .filter(
      (heat) =>
        heat.writes > 0 &&
        ((heat.space === 'owner' && heat.key.startsWith(`files#${ownerId}`)) ||
          (heat.space === 'table' && heat.key.startsWith(`usage#${ownerId}`)) ||
          (heat.space === 'table' && heat.key.startsWith('throttle#static-upload-token'))),
    );
}

describe('the static upload token’s owner', () => {
  it('spreads its listing, usage and rate writes: no partition key takes more than an eighth of them', () => {
    const keys = ownerKeys();
    const total = keys.reduce((sum, heat) => sum + heat.writes, 0);
    const family = (prefix: string) => keys.filter((heat) => heat.key.startsWith(prefix));

    // Every upload wrote one listing entry, one usage bucket and one rate bucket.
    expect(total).toBeGreaterThanOrEqual(3 * UPLOADS);
    expect(family(`files#${ownerId}#`).length).toBeGreaterThanOrEqual(12);
    expect(family(`usage#${ownerId}#`).length).toBeGreaterThanOrEqual(6);
    expect(family('throttle#').length).toBeGreaterThanOrEqual(6);
    // Before: `files#<owner>`, `usage#<owner>` and the token's one throttle item each took every upload.
    expect(keys.map((heat) => heat.key)).not.toContain(`files#${ownerId}`);
    expect(keys.map((heat) => heat.key)).not.toContain(`usage#${ownerId}`);
    const hottest = Math.max(...keys.map((heat) => heat.writes));
    expect(hottest / total).toBeLessThanOrEqual(1 / 8);
  });

  it('puts no key of the owner past two fifths of a partition’s writes at ten times the target (the heat model)', () => {
    // The heat model's rate of static-token uploads (50/s at the target), each key's units per upload.
    const predicted = predict(ownerKeys(), recorder.requests, new Set());
    const figures = predicted.map((key) => `${key.key} ${key.wcu_per_s} WCU/s ${key.rcu_per_s} RCU/s`);
    // Before the spread: `usage#<owner>` about 100 WCU/s at the target, 1,000 at 10x (a whole partition).
    // A bucket is chosen at random per upload, so one's share of a hundred uploads varies: an even share is
    // about 160 WCU/s at 10x, and the bound leaves room for chance while failing the single key's 1,000.
    expect(Math.max(...predicted.map((key) => key.wcu_per_s)) * 10, figures.join('\n')).toBeLessThanOrEqual(
      400,
    );
    expect(Math.max(...predicted.map((key) => key.rcu_per_s)) * 10, figures.join('\n')).toBeLessThanOrEqual(
      1000,
    );
  });

  it('lists every file newest first across the shards in cursor pages, files from before the shards too', async () => {
    // Prepare: a file written before administrators' listings were sharded (plain `files#<owner>`).
    const id = randomUUID();
    const before = newFileItem({
      id,
      key: `2020/01/${id}.png`,
      filename: `${id}.png`,
      facts: {
        sha256: id.replaceAll('-', '').padEnd(64, '0'),
        size: 10,
        mimeType: 'image/png',
        ext: 'png',
        kind: 'png',
        width: 1,
        height: 1,
      },
      permission: 'private',
      ownerId,
      ownerRole: 'user',
      now: new Date(Date.UTC(2020, 0, 1)),
      originalName: 'old.png',
      baseUrl: deps.settings.base_url,
      listingShards: deps.settings.listing_shards,
    });
    expect(before.gsi1pk).toBe(`files#${ownerId}`);
    await deps.table.put(before);

    // Act: pages of 7 with the token (its owner's files).
    const seen: UploadRecord[] = [];
    let cursor: string | null = null;
    do {
      const query: URLSearchParams = new URLSearchParams({ limit: '7', ...(cursor ? { cursor } : {}) });
      const page: { status: number; body: Envelope<FilePageBody> } = await call<FilePageBody>({
        path: `/api/v1/files?${query}`,
        headers: bearer(STATIC_TOKEN),
      });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.items);
      cursor = page.body.data.next_cursor;
    } while (cursor);

    // Assess: each once, newest first (creation time, then id), the old file last.
    const ids = seen.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual([...uploaded.map((record) => record.id), id].sort());
    const order = seen.map((record) => `${new Date(record.created_at).getTime()}`.padStart(15, '0'));
    expect(order).toEqual([...order].sort().reverse());
    expect(seen.at(-1)?.id).toBe(id);
  });

  it('moves its listing entries to their shards of a new listing_shards, and back (npm run migrate:shards)', async () => {
    // Act
    const fewer = 4;
    const moved = await migrateItems(deps.table, { listingShards: fewer });
    const files = new FileRepository({
      table: deps.table,
      baseUrl: deps.settings.base_url,
      listingShards: fewer,
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await files.list(
        { id: ownerId, role: 'admin' },
        { limit: 50, ...(cursor ? { cursor } : {}) },
      );
      seen.push(...page.items.map((record) => record.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    await migrateItems(deps.table, { listingShards: deps.settings.listing_shards });
    const again = await migrateItems(deps.table, { listingShards: deps.settings.listing_shards });

    // Assess
    expect(moved.migrations['files: administrators’ listing shards']?.updated).toBeGreaterThan(0);
    expect(seen).toEqual(expect.arrayContaining(uploaded.map((record) => record.id)));
    expect(new Set(seen).size).toBe(seen.length);
    expect(again.migrations['files: administrators’ listing shards']).toEqual({ updated: 0, skipped: 0 });
  });
});
