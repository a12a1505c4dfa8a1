// Moderation end to end in process (docs/MODERATION.md), on DynamoDB Local and s3rver with the real model:
// the worker classifies a stored file from its stream record and the policy decides, proven across
// thresholds set just below and just above the image's measured score; a held file is 451 at the local
// edge (renditions too) and through shares, out of the gallery, 200 to its owner through the content route,
// and its hold reaches the edge's store on the takedowns worker's run; reviews approve it, or take it down
// (its likeness then refused at upload, resized, recompressed and stripped) and disable its uploader; each
// review is an audit event; reports from anyone queue a file, at a rate per address.
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModerationHandler } from '#functions/moderation/handler.ts';
import { HELD_MESSAGE } from '#lib/files/moderation-state.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { backfillModeration } from '#lib/moderation/backfill.ts';
import { buildClassification } from '#lib/moderation/build.ts';
import { CLASSIFIER_FAILED } from '#lib/moderation/classification.ts';
import { classifierFor } from '#lib/moderation/classifier.ts';
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import { noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { type TestDeps, testDeps } from '#test/support/deps.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { makeBmp, photoJpeg } from '#test/support/images.ts';
import { startLocalEdge } from '#test/support/local-edge.ts';
import { disguised, drawing } from '#test/support/moderation-images.ts';
import { testTable } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { uploadInput } from '../files/helpers.ts';

let admin: TestAccount;
let edge: Awaited<ReturnType<typeof startLocalEdge>>;
let edgeUrl: string;
/** The score the real model gives PHOTO, measured once. */
let photoScore: number;
let PHOTO: Buffer;

/** The edge's store as the takedowns worker writes it (a recording fake; CloudFront KeyValueStore in AWS). */
function recordingStore(): EdgeDenyList & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    put: async (keys, untilMs) => {
      for (const key of keys) entries.set(key, String(untilMs));
    },
    remove: async (keys) => {
      for (const key of keys) entries.delete(key);
    },
    write: async (puts, removals) => {
      for (const [key, value] of puts) entries.set(key, value);
      for (const key of removals) entries.delete(key);
    },
  };
}

type Thresholds = { hold_above: number | null; flag_above: number | null };

/** The API, the moderation worker and the takedowns worker over one set of dependencies and thresholds. */
function service(thresholds: Thresholds, store = recordingStore()) {
  const deps: TestDeps = testDeps({ moderation: thresholds, denyList: store, cdn: noInvalidator });
  const call = async <T = unknown>(group: 'files' | 'shares', input: EventInput) => {
    const result = await deps.handlers[group](apiEvent(input), lambdaContext as Context);
    const json = String((result.headers as Record<string, string>)?.['content-type']).includes('json');
    return {
      status: result.statusCode ?? 0,
      body: (json ? parseBody(result) : undefined) as { message: string; data: T },
      bytes: Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8'),
    };
  };
  /** The worker's stream batch of these new file records, as Lambda hands it. */
  const classify = (...ids: string[]) =>
    deps.handlers.moderation(
      {
        Records: ids.map((id, index) => ({
          eventName: 'INSERT',
          dynamodb: {
            Keys: { pk: { S: `file#${id}` }, sk: { S: 'file' } },
            SequenceNumber: String(index + 1),
          },
        })),
      } as DynamoDBStreamEvent,
      lambdaContext as Context,
    );
  const upload = async (owner: TestAccount, bytes: Buffer, permission = 'public') => {
    const answer = await call<UploadRecord>(
      'files',
      uploadInput(owner.headers, { bytes, contentType: 'image/jpeg', filename: 'a.jpg' }, [
        { name: 'permission', data: permission },
      ]),
    );
    return answer;
  };
  const record = async (owner: TestAccount, id: string) =>
    (
      await call<UploadRecord>('files', {
        method: 'GET',
        path: `/api/v1/files/${id}`,
        headers: owner.headers,
      })
    ).body.data;
  const review = (id: string, action: string) =>
    call<{ blocked: boolean; owner_disabled: boolean }>('files', {
      method: 'POST',
      path: `/api/v1/admin/moderation/${id}`,
      headers: { ...admin.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ action }),
    });
  const queue = async () =>
    (
      await call<{ items: Array<{ file: UploadRecord; report_count: number; reports: unknown[] }> }>(
        'files',
        {
          method: 'GET',
          path: '/api/v1/admin/moderation',
          headers: admin.headers,
        },
      )
    ).body.data.items;
  const runTakedowns = () => deps.handlers.takedowns({}, lambdaContext as Context);
  return { deps, call, classify, upload, record, review, queue, runTakedowns, store };
}

const atEdge = async (path: string) => {
  const answer = await fetch(`${edgeUrl}${path}`);
  return { status: answer.status, text: await answer.text() };
};

beforeAll(async () => {
  await provisionTestStack();
  admin = await createTestAccount({ role: 'admin' });
  PHOTO = await photoJpeg(640, 480, 7);
  const classifier = await classifierFor('nsfwjs', { maxInputPixels: 50_000_000, region: config.aws.region });
  photoScore = (await classifier.classify(PHOTO)).score;
  edge = await startLocalEdge();
  edgeUrl = edge.url;
}, 120_000);

afterAll(async () => {
  await edge?.close();
});

describe('classification and the policy', () => {
  it('scores every class, and holds, flags or publishes by thresholds just around the measured score', async () => {
    const below = Math.max(0, photoScore - 1e-4);
    const above = Math.min(1, photoScore + 1e-4);
    const cases: Array<[Thresholds, string]> = [
      [{ hold_above: below, flag_above: null }, 'held'],
      [{ hold_above: above, flag_above: below }, 'flagged'],
      [{ hold_above: above, flag_above: above }, 'published'],
    ];
    for (const [thresholds, state] of cases) {
      const s = service(thresholds);
      const owner = await createTestAccount();
      const uploaded = await s.upload(owner, PHOTO);
      expect(uploaded.status).toBe(200);
      // Not classified yet: the record says nothing of it.
      expect(uploaded.body.data.moderation).toBeUndefined();

      expect(await s.classify(uploaded.body.data.id)).toEqual({ batchItemFailures: [] });

      const moderation = (await s.record(owner, uploaded.body.data.id)).moderation!;
      expect(moderation.state, JSON.stringify(thresholds)).toBe(state);
      expect(moderation.score).toBeCloseTo(photoScore, 6);
      expect(moderation.labels.map((label) => label.name).sort()).toEqual([
        'Drawing',
        'Hentai',
        'Neutral',
        'Porn',
        'Sexy',
      ]);
      const sum = moderation.labels.reduce((total, label) => total + label.score, 0);
      expect(sum).toBeCloseTo(1, 3);
      const queued = (await s.queue()).some((entry) => entry.file.id === uploaded.body.data.id);
      expect(queued, state).toBe(state !== 'published');
    }
  }, 120_000);

  it('flags a file it cannot classify (never published unseen), or holds it where everything is held', async () => {
    const flagging = service({ hold_above: 0.99, flag_above: 0.99 });
    const owner = await createTestAccount();
    // BMP: stored and served, but the classifier does not decode it.
    const bmp = await flagging.call<UploadRecord>(
      'files',
      uploadInput(owner.headers, { bytes: makeBmp(24, 16), contentType: 'image/bmp', filename: 'a.bmp' }),
    );
    await flagging.classify(bmp.body.data.id);
    const flagged = (await flagging.record(owner, bmp.body.data.id)).moderation!;
    expect(flagged).toMatchObject({ state: 'flagged', score: null, labels: [] });
    expect(flagged.error).toMatch(/cannot read/);

    const holdAll = service({ hold_above: 0, flag_above: null });
    const other = await createTestAccount();
    const held = await holdAll.call<UploadRecord>(
      'files',
      uploadInput(other.headers, { bytes: makeBmp(20, 12), contentType: 'image/bmp', filename: 'b.bmp' }),
    );
    await holdAll.classify(held.body.data.id);
    expect((await holdAll.record(other, held.body.data.id)).moderation?.state).toBe('held');
  });

  it('leaves a file the classifier failed on in a stated state, asks the stream to retry, then classifies it', async () => {
    const s = service({ hold_above: 0, flag_above: null });
    const owner = await createTestAccount();
    const { id } = (await s.upload(owner, await drawing(35))).body.data;
    // The real model behind a classifier that fails its first call (a model load or a decode gone wrong).
    const real = await classifierFor('nsfwjs', { maxInputPixels: 50_000_000, region: config.aws.region });
    let calls = 0;
    const classification = buildClassification({
      table: s.deps.table,
      files: s.deps.uploads.files,
      storage: s.deps.storage,
      shards: config.listing_shards,
      policy: { hold_above: 0.99, flag_above: 0.99, plans: {} },
      planOf: async () => undefined,
      classifier: async () => ({
        classify: async (bytes) => {
          calls += 1;
          if (calls === 1) throw new Error('model failed');
          return real.classify(bytes);
        },
      }),
    });
    const handler = createModerationHandler(() => ({ classification }));
    const record = {
      eventName: 'INSERT',
      dynamodb: { Keys: { pk: { S: `file#${id}` } }, SequenceNumber: '42' },
    };

    const failed = await handler({ Records: [record] } as DynamoDBStreamEvent, lambdaContext as Context);

    expect(failed).toEqual({ batchItemFailures: [{ itemIdentifier: '42' }] });
    const stated = (await s.record(owner, id)).moderation!;
    expect(stated).toMatchObject({ state: 'flagged', score: null, error: CLASSIFIER_FAILED });
    expect((await s.queue()).map((entry) => entry.file.id)).toContain(id);
    // Lambda's retry of the same record: classified this time, and the stated state replaced.
    expect(await handler({ Records: [record] } as DynamoDBStreamEvent, lambdaContext as Context)).toEqual({
      batchItemFailures: [],
    });
    const classified = (await s.record(owner, id)).moderation!;
    expect(classified.state).toBe('published');
    expect(classified.error).toBeUndefined();
    expect(classified.labels).toHaveLength(5);
    expect((await s.queue()).map((entry) => entry.file.id)).not.toContain(id);
  });

  it('leaves a reviewed file alone when its stream record comes again', async () => {
    const s = service({ hold_above: 0, flag_above: null });
    const owner = await createTestAccount();
    const { id } = (await s.upload(owner, await drawing(31))).body.data;
    await s.classify(id);
    expect((await s.review(id, 'approve')).status).toBe(200);

    await s.classify(id);

    expect((await s.record(owner, id)).moderation).toMatchObject({ state: 'published', reviewed: true });
  });
});

describe('a held file', () => {
  it('is 451 to strangers at the edge, renditions and shares included, out of the gallery; 200 to its owner', async () => {
    const s = service({ hold_above: 0, flag_above: null });
    const [owner, stranger] = await Promise.all([createTestAccount(), createTestAccount()]);
    const file = (await s.upload(owner, await drawing(41))).body.data;
    const share = await s.call<{ id: string; url: string }>('shares', {
      method: 'POST',
      path: '/api/v1/shares',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: file.id }),
    });
    expect(share.status).toBe(201);
    // Before the worker: served as any new file (its key is known only to its uploader so far).
    expect((await atEdge(`/i/${file.key}`)).status).toBe(200);

    await s.classify(file.id);

    for (const query of ['', '?w=480&f=webp', '?p=thumb']) {
      const answer = await atEdge(`/i/${file.key}${query}`);
      expect(answer.status, query).toBe(451);
      expect(answer.text).toBe(HELD_MESSAGE);
    }
    const page = await s.call('shares', { method: 'GET', path: `/s/${share.body.data.id}` });
    expect(page.status).toBe(451);
    const opened = await s.call('shares', {
      method: 'POST',
      path: `/api/v1/shares/${share.body.data.id}/open`,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(opened.status).toBe(451);
    const gallery = await s.call<{ items: UploadRecord[] }>('files', {
      method: 'GET',
      path: '/api/v1/gallery',
    });
    expect(gallery.body.data.items.map((item) => item.id)).not.toContain(file.id);
    // Its owner and administrators see it through the console's content route; nobody else.
    const own = await s.call('files', {
      method: 'GET',
      path: `/api/v1/files/${file.id}/content`,
      headers: owner.headers,
    });
    expect(own.status).toBe(200);
    expect(own.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const byAdmin = await s.call('files', {
      method: 'GET',
      path: `/api/v1/files/${file.id}/content`,
      headers: admin.headers,
    });
    expect(byAdmin.status).toBe(200);
    const byStranger = await s.call('files', {
      method: 'GET',
      path: `/api/v1/files/${file.id}/content`,
      headers: stranger.headers,
    });
    expect(byStranger.status).toBe(404);
    // Its owner cannot put it back in the gallery before a review.
    const republish = await s.call('files', {
      method: 'PATCH',
      path: `/api/v1/files/${file.id}`,
      headers: { ...owner.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ permission: 'public' }),
    });
    expect(republish.status).toBe(409);
    // The takedowns worker copies the hold into the edge's store.
    expect((await s.runTakedowns()).holds).toBeGreaterThanOrEqual(1);
    expect(s.store.entries.get(`h:${file.key}`)).toBe('1');
  });

  it('approved, is served again, back in the gallery, released at the edge, out of the queue, and audited', async () => {
    const s = service({ hold_above: 0, flag_above: null });
    const owner = await createTestAccount();
    const file = (await s.upload(owner, await drawing(43))).body.data;
    await s.classify(file.id);
    await s.runTakedowns();
    expect(s.store.entries.has(`h:${file.key}`)).toBe(true);

    const approved = await s.review(file.id, 'approve');

    expect(approved.status).toBe(200);
    expect((await atEdge(`/i/${file.key}`)).status).toBe(200);
    const gallery = await s.call<{ items: UploadRecord[] }>('files', {
      method: 'GET',
      path: '/api/v1/gallery',
    });
    expect(gallery.body.data.items.map((item) => item.id)).toContain(file.id);
    expect((await s.queue()).map((entry) => entry.file.id)).not.toContain(file.id);
    await s.runTakedowns();
    expect(s.store.entries.has(`h:${file.key}`)).toBe(false);
    const audit = await s.call<{ items: Array<{ action: string; target: string; actor_id: string }> }>(
      'files',
      {
        method: 'GET',
        path: '/api/v1/admin/audit',
        headers: admin.headers,
      },
    );
    expect(audit.body.data.items).toContainEqual(
      expect.objectContaining({
        action: 'moderation.approve',
        target: `file:${file.id}`,
        actor_id: admin.account.id,
      }),
    );
  });
});

describe('a takedown from the queue', () => {
  it('refuses the image again, resized to 70 %, recompressed at q=60 and stripped, and accepts an unrelated one', async () => {
    const s = service({ hold_above: null, flag_above: 0 });
    const owner = await createTestAccount();
    const original = await drawing(51);
    const file = (await s.upload(owner, original)).body.data;
    await s.classify(file.id);

    const taken = await s.review(file.id, 'take_down');

    expect(taken.status).toBe(200);
    expect(taken.body.data).toMatchObject({ blocked: true, owner_disabled: false });
    expect(
      (await s.call('files', { method: 'GET', path: `/api/v1/files/${file.id}`, headers: owner.headers }))
        .status,
    ).toBe(404);
    const again = await s.upload(await createTestAccount(), await disguised(original));
    expect(again.status).toBe(451);
    expect(again.body.message).toMatch(/likeness of an image the operator took down/);
    const unrelated = await s.upload(owner, await drawing(52));
    expect(unrelated.status).toBe(200);
    // The operator's list holds it; removed, the likeness may come back.
    const list = await s.call<{ items: Array<{ id: string; file_id: string }> }>('files', {
      method: 'GET',
      path: '/api/v1/admin/blocklist',
      headers: admin.headers,
    });
    const entry = list.body.data.items.find((item) => item.file_id === file.id)!;
    expect(entry).toBeDefined();
    const removed = await s.call('files', {
      method: 'DELETE',
      path: `/api/v1/admin/blocklist/${entry.id}`,
      headers: admin.headers,
    });
    expect(removed.status).toBe(200);
    expect((await s.upload(owner, await disguised(original))).status).toBe(200);
  });

  it('does the same for a photo: its disguised copy refused, by direct upload and by presign, an unrelated photo taken', async () => {
    const s = service({ hold_above: null, flag_above: 0 });
    const [owner, other] = await Promise.all([createTestAccount(), createTestAccount()]);
    const original = await photoJpeg(900, 600);
    const file = (await s.upload(owner, original)).body.data;
    await s.classify(file.id);
    expect((await s.review(file.id, 'take_down')).body.data).toMatchObject({ blocked: true });

    const copy = await disguised(original);
    expect((await s.upload(other, copy)).status).toBe(451);
    // The presigned path: the bytes PUT to S3, then the confirm refuses them and spends the presign.
    const grant = await s.call<{ key: string; url: string }>('files', {
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: { ...other.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ mime_type: 'image/jpeg', size: copy.length, filename: 'copy.jpg' }),
    });
    expect(grant.status).toBe(200);
    const put = await fetch(grant.body.data.url, {
      method: 'PUT',
      body: copy,
      headers: { 'content-type': 'image/jpeg' },
    });
    expect(put.ok).toBe(true);
    const confirm = () =>
      s.call('files', {
        method: 'POST',
        path: '/api/v1/upload/confirm',
        headers: { ...other.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ key: grant.body.data.key }),
      });
    expect((await confirm()).status).toBe(451);
    expect((await confirm()).status).toBe(404);
    expect((await s.upload(other, await photoJpeg(1200, 800))).status).toBe(200);
  });

  it('with the uploader disabled: their token stops at once; an administrator is never disabled', async () => {
    const s = service({ hold_above: null, flag_above: 0 });
    const owner = await createTestAccount();
    const file = (await s.upload(owner, await drawing(61))).body.data;
    await s.classify(file.id);

    const taken = await s.review(file.id, 'take_down_and_disable');

    expect(taken.body.data).toMatchObject({ owner_disabled: true });
    expect(
      (await s.call('files', { method: 'GET', path: '/api/v1/files', headers: owner.headers })).status,
    ).toBe(401);
    const ownFile = (await s.upload(admin, await drawing(62))).body.data;
    await s.classify(ownFile.id);
    const notAdmin = await s.review(ownFile.id, 'take_down_and_disable');
    expect(notAdmin.body.data).toMatchObject({ owner_disabled: false });
    expect(
      (await s.call('files', { method: 'GET', path: '/api/v1/files', headers: admin.headers })).status,
    ).toBe(200);
  });
});

describe('files stored before moderation', () => {
  it('are classified by the backfill, once: a second run finds none left', async () => {
    const s = service({ hold_above: 0, flag_above: null });
    const owner = await createTestAccount();
    // Stored while nothing classified them (the stream mapping starts at its newest record).
    const before = [
      (await s.upload(owner, await drawing(111))).body.data,
      (await s.upload(owner, PHOTO)).body.data,
    ];
    expect(before.every((file) => file.moderation === undefined)).toBe(true);

    const report = await backfillModeration(s.deps.table, s.deps.groups.moderation.classification);

    expect(report.files).toBeGreaterThanOrEqual(2);
    expect(report.failed).toBe(0);
    for (const file of before) expect((await s.record(owner, file.id)).moderation?.state).toBe('held');
    expect(await backfillModeration(s.deps.table, s.deps.groups.moderation.classification)).toEqual({
      files: 0,
      outcomes: {},
      failed: 0,
    });
  });
});

describe('the queue', () => {
  it('answers an empty page, not a failure, when none of the files a page names is queued any more', async () => {
    // A batch read of no keys is refused by DynamoDB: the queue (and the audit log) must not ask for one.
    expect(await testTable().getMany([])).toEqual([]);
    const s = service({ hold_above: null, flag_above: 0 });
    const owner = await createTestAccount();
    const file = (await s.upload(owner, await drawing(101))).body.data;
    await s.classify(file.id);
    // Deleted for good by its owner while queued (to the trash, then out of it): the queue leaves it out
    // (and forgets it). A file only in the trash stays queued: its owner may restore it.
    await s.call('files', { method: 'DELETE', path: `/api/v1/files/${file.id}`, headers: owner.headers });
    await s.call('files', {
      method: 'DELETE',
      path: `/api/v1/files/trash/${file.id}`,
      headers: owner.headers,
    });
    const listed = await s.call<{ items: Array<{ file: UploadRecord }> }>('files', {
      method: 'GET',
      path: '/api/v1/admin/moderation?limit=100',
      headers: admin.headers,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.items.map((entry) => entry.file.id)).not.toContain(file.id);
  });
});

describe('reports', () => {
  it("queue a file by its link, its share's page or its share image link, with the reports shown", async () => {
    const s = service({ hold_above: null, flag_above: null });
    const owner = await createTestAccount();
    const file = (await s.upload(owner, await drawing(71))).body.data;
    await s.classify(file.id);
    expect((await s.queue()).map((entry) => entry.file.id)).not.toContain(file.id);
    const share = await s.call<{ id: string; url: string }>('shares', {
      method: 'POST',
      path: '/api/v1/shares',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: file.id }),
    });
    const opened = await s.call<{ items: Array<{ url: string }> }>('shares', {
      method: 'POST',
      path: `/api/v1/shares/${share.body.data.id}/open`,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const report = (url: string, reason = 'spam', sourceIp = '198.51.100.7') =>
      s.call('shares', {
        method: 'POST',
        path: '/api/v1/reports',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url, reason, note: 'seen on a forum' }),
        sourceIp,
      });

    expect((await report(file.url)).status).toBe(202);
    expect((await report(share.body.data.url, 'copyright', '198.51.100.8')).status).toBe(202);
    expect((await report(opened.body.data.items[0]!.url, 'other', '198.51.100.9')).status).toBe(202);

    const entry = (await s.queue()).find((item) => item.file.id === file.id)!;
    expect(entry.report_count).toBe(3);
    expect(entry.reports).toHaveLength(3);
    expect(entry.reports).toContainEqual(
      expect.objectContaining({ reason: 'copyright', note: 'seen on a forum' }),
    );
    expect(
      (await report(`${config.base_url}/i/2026/01/01/nothing.png`, 'spam', '198.51.100.10')).status,
    ).toBe(404);
    expect((await report('mailto:someone@example.test', 'spam', '198.51.100.11')).status).toBe(400);
    const badReason = await report(file.url, 'boring', '198.51.100.12');
    expect(badReason.status).toBe(400);
    expect(badReason.body.message).toMatch(/reason/);
  });

  it('are limited per address: of 8 at once, the rate lets 5 through and answers 429 to the rest', async () => {
    const s = service({ hold_above: null, flag_above: null });
    const owner = await createTestAccount();
    const file = (await s.upload(owner, await drawing(81))).body.data;
    const statuses = await Promise.all(
      Array.from({ length: 8 }, () =>
        s.call('shares', {
          method: 'POST',
          path: '/api/v1/reports',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url: file.url, reason: 'spam' }),
          sourceIp: '203.0.113.99',
        }),
      ),
    );
    const counts = statuses.map((answer) => answer.status).sort();
    expect(counts).toEqual([202, 202, 202, 202, 202, 429, 429, 429]);
    const entry = (await s.queue()).find((item) => item.file.id === file.id)!;
    expect(entry.report_count).toBe(5);
  });
});
