// The edge's deny-list of taken-down files (docs/UPLOADS.md "Deleting"): the takedowns worker's next run
// lists every file the back office took down, for the edge's maximum age, on the store the /i/* edge
// function reads (here a recording fake; CloudFront KeyValueStore in AWS) and in the table's record, which
// the local server reads as its edge: the file and its renditions are 404 there at once. Past the maximum
// age a run takes the entry off again. A deny-list that cannot be written fails the run and keeps the
// takedown for the next.
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import { deniedAtEdge, type EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import { noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import type { TakedownRun } from '#lib/platform/cdn/takedowns.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { startLocalEdge } from '#test/support/local-edge.ts';
import { testTable } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { uniquePng, uploadInput } from './helpers.ts';

const MAX_AGE_MS = config.cdn.deleted_max_age_seconds * 1000;
let admin: TestAccount;
let owner: TestAccount;
let edge: Awaited<ReturnType<typeof startLocalEdge>>;
let edgeUrl: string;

/** The edge's store as the worker writes it: what is listed, until when; what was taken off. */
function recordingDenyList(): EdgeDenyList & {
  listed: Map<string, number>;
  removed: string[];
  rules: Map<string, string>;
  failWith?: Error;
} {
  const list = {
    listed: new Map<string, number>(),
    removed: [] as string[],
    failWith: undefined as Error | undefined,
    rules: new Map<string, string>(),
    async put(keys: string[], untilMs: number) {
      if (list.failWith) throw list.failWith;
      for (const key of keys) list.listed.set(key, untilMs);
    },
    async remove(keys: string[]) {
      list.removed.push(...keys);
      for (const key of keys) list.listed.delete(key);
    },
    async write(puts: Array<[string, string]>, removals: string[]) {
      for (const [key, value] of puts) list.rules.set(key, value);
      for (const key of removals) list.rules.delete(key);
    },
  };
  return list;
}

/** The upload API and the takedowns worker over one set of dependencies, the worker's clock `aheadMs`. */
function service(denyList: EdgeDenyList, aheadMs = 0) {
  const clock = () => new Date(Date.now() + aheadMs);
  const { handlers } = testDeps({ denyList, cdn: noInvalidator, clock });
  const call = async <T = unknown>(input: Parameters<typeof apiEvent>[0]) => {
    const result = await handlers.files(apiEvent(input), lambdaContext as Context);
    return { status: result.statusCode ?? 0, body: parseBody(result) as { data: T } };
  };
  const runWorker = (): Promise<TakedownRun> => handlers.takedowns({}, lambdaContext as Context);
  return { call, runWorker };
}

async function upload(s: ReturnType<typeof service>): Promise<UploadRecord> {
  const answer = await s.call<UploadRecord>(uploadInput(owner.headers, { bytes: uniquePng(makePng).bytes }));
  expect(answer.status).toBe(200);
  return answer.body.data;
}

const takeDown = (s: ReturnType<typeof service>, id: string) =>
  s.call({ method: 'DELETE', path: `/api/v1/admin/files/${id}`, headers: admin.headers });

/** The status the local server's /i/* hook answers for this path (299: it left it to the routes). */
async function atLocalEdge(path: string): Promise<number> {
  return (await fetch(`${edgeUrl}${path}`)).status;
}

beforeAll(async () => {
  await provisionTestStack();
  [admin, owner] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  edge = await startLocalEdge();
  edgeUrl = edge.url;
});

afterAll(async () => {
  await edge?.close();
});

describe("the edge's deny-list", () => {
  it('lists a taken-down file at the next run, for the edge maximum age, in the edge store and the table', async () => {
    // Prepare
    const denyList = recordingDenyList();
    const s = service(denyList);
    const [taken, kept] = [await upload(s), await upload(s)];
    const before = Date.now();

    // Act
    const deleted = await takeDown(s, taken.id);
    const run = await s.runWorker();
    const again = await s.runWorker();

    // Assess
    expect(deleted.status).toBe(200);
    expect(run).toMatchObject({ denied: 1, paths: 1 });
    expect(again).toMatchObject({ denied: 0, paths: 0 });
    expect([...denyList.listed.keys()]).toEqual([taken.key]);
    expect(denyList.listed.get(taken.key)).toBeGreaterThanOrEqual(before + MAX_AGE_MS);
    expect(denyList.listed.get(taken.key)).toBeLessThanOrEqual(Date.now() + MAX_AGE_MS);
    expect(await deniedAtEdge(testTable(), taken.key)).toBe(true);
    expect(await deniedAtEdge(testTable(), kept.key)).toBe(false);
  });

  it('makes the local edge answer 404 for a listed key, its renditions too, while it still holds the bytes', async () => {
    // Prepare: a file still in the bucket (as an edge's cached copy would be) whose takedown is recorded.
    const denyList = recordingDenyList();
    const s = service(denyList);
    const record = await upload(s);
    const { groups } = testDeps({ denyList });
    const servedBefore = await atLocalEdge(`/i/${record.key}`);

    // Act
    await groups.takedowns.takedowns.record(`/i/${record.key}*`);
    await s.runWorker();

    // Assess
    expect(servedBefore).toBe(200);
    expect(await atLocalEdge(`/i/${record.key}`)).toBe(404);
    expect(await atLocalEdge(`/i/${record.key}?w=480&f=webp`)).toBe(404);
    // Another file's rendition still goes on to the render route (299 here), its original is served.
    const other = await upload(s);
    expect(await atLocalEdge(`/i/${other.key}?w=480&f=webp`)).toBe(299);
    expect(await atLocalEdge(`/i/${other.key}`)).toBe(200);
  });

  it('takes an entry off the edge store and the table once the edge maximum age has passed', async () => {
    // Prepare
    const denyList = recordingDenyList();
    const now = service(denyList);
    const record = await upload(now);
    await takeDown(now, record.id);
    await now.runWorker();

    // Act: a day later, and a minute.
    const early = await service(denyList, MAX_AGE_MS - 60_000).runWorker();
    const heldEarly = denyList.listed.has(record.key);
    await service(denyList, MAX_AGE_MS + 60_000).runWorker();

    // Assess
    expect(early.denied).toBe(0);
    expect(heldEarly).toBe(true);
    expect(denyList.removed).toContain(record.key);
    expect(denyList.listed.has(record.key)).toBe(false);
    expect(await testTable().get({ pk: `denied#${record.key}`, sk: 'denied' })).toBeUndefined();
  });

  it('fails the run when the edge store cannot be written, and lists the takedown on the next', async () => {
    // Prepare
    const denyList = recordingDenyList();
    const s = service(denyList);
    const record = await upload(s);
    await takeDown(s, record.id);
    denyList.failWith = Object.assign(new Error('Access denied'), { name: 'AccessDeniedException' });

    // Act
    const failed = await s.runWorker().then(
      () => undefined,
      (error: Error) => error.name,
    );
    const listedAfterFailure = await deniedAtEdge(testTable(), record.key);
    denyList.failWith = undefined;
    const retried = await s.runWorker();

    // Assess
    expect(failed).toBe('AccessDeniedException');
    expect(listedAfterFailure).toBe(false);
    expect(retried).toMatchObject({ denied: 1, paths: 1 });
    expect([...denyList.listed.keys()]).toEqual([record.key]);
  });
});
