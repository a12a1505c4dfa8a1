// Deletes and the CDN (docs/UPLOADS.md "Deleting"): an owner's delete creates no invalidation (the edge drops
// its copy within cdn.deleted_max_age_seconds); the back office's takedowns are recorded as `/i/<key>*` (the
// file and its renditions) and sent by the takedowns worker, the pending paths in one invalidation per run
// (at most 1,000, of which at most 15 wildcards: CloudFront's limit in flight); a run with nothing pending
// sends nothing; a failed invalidation keeps the paths for the next run, and so does one CloudFront refuses
// while earlier batches are in flight, without failing; a failed delete records nothing.
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import {
  MAX_TAKEDOWN_PATHS,
  MAX_TAKEDOWN_WILDCARD_PATHS,
  type TakedownRun,
} from '#lib/platform/cdn/takedowns.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bucketKeys, uniquePng, uploadInput } from './helpers.ts';

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

/** Records every invalidation; fails each one with `failWith` while it is set. */
function recordingCdn(): Invalidator & { calls: string[][]; failWith: Error | undefined } {
  const cdn = {
    calls: [] as string[][],
    failWith: undefined as Error | undefined,
    async invalidate(paths: string[]) {
      cdn.calls.push(paths);
      if (cdn.failWith) throw cdn.failWith;
    },
  };
  return cdn;
}

/** The upload API and one run of the takedowns worker over one set of dependencies. */
function service(cdn: Invalidator) {
  const { handlers } = testDeps({ cdn });
  const call = async <T = unknown>(input: EventInput) => {
    const result = await handlers.files(apiEvent(input), lambdaContext as Context);
    return { status: result.statusCode ?? 0, body: parseBody(result) as { data: T } };
  };
  const runWorker = (): Promise<TakedownRun> => handlers.takedowns({}, lambdaContext as Context);
  return Object.assign(call, { runWorker });
}

/** Runs the worker until nothing is pending (other tests' takedowns share this file's table). */
async function drainTakedowns(s: ReturnType<typeof service>): Promise<void> {
  while ((await s.runWorker()).paths > 0);
}

async function upload(call: ReturnType<typeof service>, account: TestAccount): Promise<UploadRecord> {
  const answer = await call<UploadRecord>(uploadInput(account.headers, { bytes: uniquePng(makePng).bytes }));
  expect(answer.status).toBe(200);
  return answer.body.data;
}

const ownerDelete = (id: string, account: TestAccount): EventInput => ({
  method: 'DELETE',
  path: `/api/v1/files/${id}`,
  headers: account.headers,
});
/** An owner's delete from the trash (docs/UPLOADS.md "Trash"): the delete for good. */
const trashDelete = (id: string, account: TestAccount): EventInput => ({
  ...ownerDelete(id, account),
  path: `/api/v1/files/trash/${id}`,
});
const adminDelete = (id: string): EventInput => ({
  method: 'DELETE',
  path: `/api/v1/admin/files/${id}`,
  headers: admin.headers,
});

describe('deletes and the CDN', () => {
  it('creates no invalidation for an owner deleting a file, and the worker finds nothing to send', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const record = await upload(call, bob);

    // Act: to the trash, then out of it.
    await call(ownerDelete(record.id, bob));
    const deleted = await call(trashDelete(record.id, bob));
    const run = await call.runWorker();

    // Assess
    expect(deleted.status).toBe(200);
    expect(await bucketKeys(record.key)).toEqual([]);
    expect(run).toMatchObject({ denied: 0, paths: 0, invalidations: 0, more: false });
    expect(cdn.calls).toEqual([]);
  });

  it('sends three takedowns in one invalidation with their three paths; a second run sends nothing', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const records = [await upload(call, carol), await upload(call, bob), await upload(call, carol)];

    // Act
    const deleted = await Promise.all(records.map((record) => call(adminDelete(record.id))));
    const afterDeletes = [...cdn.calls];
    const first = await call.runWorker();
    const second = await call.runWorker();

    // Assess
    expect(deleted.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(afterDeletes).toEqual([]);
    expect(first).toMatchObject({ denied: 3, paths: 3, invalidations: 1, more: false });
    expect(cdn.calls).toHaveLength(1);
    expect([...cdn.calls[0]!].sort()).toEqual(records.map((record) => `/i/${record.key}*`).sort());
    expect(second).toMatchObject({ denied: 0, paths: 0, invalidations: 0, more: false });
    expect(cdn.calls).toHaveLength(1);
    expect(new URL(records[0]!.url).pathname).toBe(`/i/${records[0]!.key}`);
  });

  it("takes a file's renditions out with it: the one wildcard path covers its URL and every rendition URL", async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const record = await upload(call, carol);

    // Act
    await call(adminDelete(record.id));
    await call.runWorker();

    // Assess: CloudFront's `*` ends a path and covers whatever follows it, query strings included.
    expect(cdn.calls).toEqual([[`/i/${record.key}*`]]);
    const [path] = cdn.calls[0]!;
    const covered = (url: string) =>
      `${new URL(url).pathname}${new URL(url).search}`.startsWith(path!.slice(0, -1));
    expect(record.thumbnail).toMatch(/\?p=thumb$/);
    for (const url of [record.url, record.thumbnail!, `${record.url}?w=1920&f=auto`]) {
      expect(covered(url), url).toBe(true);
    }
  });

  it('of 50 concurrent deletes of one file (owners to the trash, takedowns), one takedown is sent', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const record = await upload(call, bob);

    // Act
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        call(index % 2 === 0 ? ownerDelete(record.id, bob) : adminDelete(record.id)),
      ),
    );
    await call.runWorker();

    // Assess: a takedown removes the file in the trash too, so exactly one of them succeeds whatever the
    // order; an owner's move succeeds at most once (before the takedown).
    const statuses = (parity: number) =>
      answers.filter((_, index) => index % 2 === parity).map((answer) => answer.status);
    expect(statuses(1).filter((status) => status === 200)).toHaveLength(1);
    expect(statuses(1).filter((status) => status === 404)).toHaveLength(24);
    expect(statuses(0).filter((status) => status === 200).length).toBeLessThanOrEqual(1);
    expect(statuses(0).every((status) => status === 200 || status === 404)).toBe(true);
    expect(cdn.calls).toEqual([[`/i/${record.key}*`]]);
    expect(await bucketKeys(record.key)).toEqual([]);
  });

  it('sends at most 15 wildcard paths a run beside every plain one, the rest the next run', async () => {
    // Prepare: 20 takedowns as the back office records them (wildcards), and 3 plain paths (recorded before
    // takedowns covered renditions).
    const cdn = recordingCdn();
    const { groups } = testDeps({ cdn });
    const { takedowns } = groups.takedowns;
    while ((await takedowns.send(cdn)).paths > 0);
    cdn.calls.length = 0;
    const wildcards = Array.from({ length: 20 }, (_, n) => `/i/2026/11/25/wild-${n}.png*`);
    const plain = Array.from({ length: 3 }, (_, n) => `/i/2026/11/25/plain-${n}.png`);
    await Promise.all([...wildcards, ...plain].map((path) => takedowns.record(path)));

    // Act
    const first = await takedowns.send(cdn);
    const second = await takedowns.send(cdn);
    const third = await takedowns.send(cdn);

    // Assess
    const wildcardsIn = (paths: string[]) => paths.filter((path) => path.endsWith('*')).length;
    expect(MAX_TAKEDOWN_WILDCARD_PATHS).toBe(15);
    expect(first).toEqual({ denied: 23, paths: 18, invalidations: 1, more: true });
    expect(second).toMatchObject({ denied: 0, paths: 5, invalidations: 1, more: false });
    expect(third).toMatchObject({ denied: 0, paths: 0, invalidations: 0, more: false });
    expect(cdn.calls.map(wildcardsIn)).toEqual([15, 5]);
    expect(cdn.calls[0]).toEqual(expect.arrayContaining(plain));
    expect(new Set(cdn.calls.flat())).toEqual(new Set([...wildcards, ...plain]));
  });

  it('keeps the batch, without failing, while CloudFront still has earlier invalidations in flight', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const record = await upload(call, bob);
    await call(adminDelete(record.id));
    cdn.failWith = Object.assign(new Error('Your request contains too many invalidations in progress'), {
      name: 'TooManyInvalidationsInProgress',
    });

    // Act
    const refused = await call.runWorker();
    cdn.failWith = undefined;
    const sent = await call.runWorker();

    // Assess
    expect(refused).toMatchObject({ denied: 1, paths: 0, invalidations: 0, more: true });
    expect(sent).toMatchObject({ denied: 0, paths: 1, invalidations: 1, more: false });
    expect(cdn.calls).toEqual([[`/i/${record.key}*`], [`/i/${record.key}*`]]);
  });

  it('sends at most 1,000 plain paths a run and leaves the rest for the next', async () => {
    // Prepare: 1,003 takedowns recorded, as the back office's deletes record them.
    const cdn = recordingCdn();
    const { groups } = testDeps({ cdn });
    const { takedowns } = groups.takedowns;
    while ((await takedowns.send(cdn)).paths > 0);
    cdn.calls.length = 0;
    const paths = Array.from({ length: MAX_TAKEDOWN_PATHS + 3 }, (_, n) => `/i/2026/11/25/batch-${n}.png`);
    for (let start = 0; start < paths.length; start += 50) {
      await Promise.all(paths.slice(start, start + 50).map((path) => takedowns.record(path)));
    }

    // Act
    const first = await takedowns.send(cdn);
    const second = await takedowns.send(cdn);
    const third = await takedowns.send(cdn);

    // Assess
    expect(first).toEqual({
      denied: MAX_TAKEDOWN_PATHS + 3,
      paths: MAX_TAKEDOWN_PATHS,
      invalidations: 1,
      more: true,
    });
    expect(second).toMatchObject({ denied: 0, paths: 3, invalidations: 1, more: false });
    expect(third).toMatchObject({ denied: 0, paths: 0, invalidations: 0, more: false });
    expect(cdn.calls.map((call) => call.length)).toEqual([MAX_TAKEDOWN_PATHS, 3]);
    expect(new Set(cdn.calls.flat())).toEqual(new Set(paths));
    // A thousand writes and deletes against DynamoDB Local: more than the default time on a busy machine.
  }, 90_000);

  it('keeps the takedown when the invalidation fails, and sends it on the next run', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const record = await upload(call, carol);
    const deleted = await call(adminDelete(record.id));
    cdn.failWith = Object.assign(new Error('User is not authorized to perform CreateInvalidation'), {
      name: 'AccessDenied',
    });

    // Act
    const failed = await call.runWorker().then(
      () => undefined,
      (error: Error) => error.name,
    );
    cdn.failWith = undefined;
    const retried = await call.runWorker();

    // Assess
    expect(deleted.status).toBe(200);
    expect(await bucketKeys(record.key)).toEqual([]);
    expect(failed).toBe('AccessDenied');
    expect(retried).toMatchObject({ denied: 0, paths: 1, invalidations: 1, more: false });
    expect(cdn.calls).toEqual([[`/i/${record.key}*`], [`/i/${record.key}*`]]);
  });

  it('records nothing when the delete fails: an unknown id, or a file of another account', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    await drainTakedowns(call);
    cdn.calls.length = 0;
    const carols = await upload(call, carol);

    // Act
    const unknown = await call(adminDelete('00000000-0000-4000-8000-000000000000'));
    const notOwn = await call(ownerDelete(carols.id, bob));
    const run = await call.runWorker();

    // Assess
    expect(unknown.status).toBe(404);
    expect(notOwn.status).toBe(404);
    expect(run.paths).toBe(0);
    expect(cdn.calls).toEqual([]);
  });
});
