// Deleting a file takes /i/<key> out of the CDN's cache (docs/UPLOADS.md): the owner's and the back
// office's deletes each invalidate exactly that path once, a failed invalidation never fails the delete,
// and a delete that fails invalidates nothing.
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import type { UploadRecord } from '#lib/files/record.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import { tapLogging } from '#lib/platform/log.ts';
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

/** Records every invalidation; fails each one with `failWith` when given. */
function recordingCdn(failWith?: Error): Invalidator & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    async invalidate(paths) {
      calls.push(paths);
      if (failWith) throw failWith;
    },
  };
}

function service(cdn: Invalidator) {
  const { handlers } = testDeps({ cdn });
  return async <T = unknown>(input: EventInput) => {
    const result = await handlers.upload(apiEvent(input), lambdaContext as Context);
    return { status: result.statusCode ?? 0, body: parseBody(result) as { data: T } };
  };
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
const adminDelete = (id: string): EventInput => ({
  method: 'DELETE',
  path: `/api/v1/admin/files/${id}`,
  headers: admin.headers,
});

/** Every log line written while `work` runs (chained to the suite's secret-scan tap). */
async function logsOf<T>(work: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const lines: string[] = [];
  const previous = tapLogging((line) => {
    lines.push(line);
    previous?.(line);
  });
  try {
    return { result: await work(), lines };
  } finally {
    tapLogging(previous);
  }
}

describe('deleting a file invalidates /i/<key> in the CDN', () => {
  it('invalidates exactly /i/<key> once when the owner deletes the file', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    const record = await upload(call, bob);

    // Act
    const deleted = await call(ownerDelete(record.id, bob));

    // Assess
    expect(deleted.status).toBe(200);
    expect(cdn.calls).toEqual([[`/i/${record.key}`]]);
    expect(new URL(record.url).pathname).toBe(`/i/${record.key}`);
  });

  it("invalidates exactly /i/<key> once when the administrator deletes another account's file", async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    const record = await upload(call, carol);

    // Act
    const deleted = await call(adminDelete(record.id));

    // Assess
    expect(deleted.status).toBe(200);
    expect(cdn.calls).toEqual([[`/i/${record.key}`]]);
  });

  it('of 50 concurrent deletes of one file, the one that succeeds is the one that invalidates', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    const record = await upload(call, bob);

    // Act
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        call(index % 2 === 0 ? ownerDelete(record.id, bob) : adminDelete(record.id)),
      ),
    );

    // Assess
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 404)).toHaveLength(49);
    expect(cdn.calls).toEqual([[`/i/${record.key}`]]);
  });

  it('still answers 200 with the file gone when the invalidation fails, and logs a warning', async () => {
    // Prepare
    const failure = Object.assign(new Error('User is not authorized to perform CreateInvalidation'), {
      name: 'AccessDenied',
    });
    const cdn = recordingCdn(failure);
    const call = service(cdn);
    const record = await upload(call, bob);

    // Act
    const { result: deleted, lines } = await logsOf(() => call(ownerDelete(record.id, bob)));
    const again = await call(ownerDelete(record.id, bob));

    // Assess
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: record.id, deleted: true });
    expect(again.status).toBe(404);
    expect(await bucketKeys(record.key)).toEqual([]);
    expect(cdn.calls).toEqual([[`/i/${record.key}`]]);
    const warnings = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.level === 'warn' && String(line.message).includes('invalidate'));
    expect(warnings).toEqual([
      expect.objectContaining({ path: `/i/${record.key}`, error_name: 'AccessDenied' }),
    ]);
  });

  it('invalidates nothing when the delete fails: an unknown id, or a file of another account', async () => {
    // Prepare
    const cdn = recordingCdn();
    const call = service(cdn);
    const carols = await upload(call, carol);

    // Act
    const unknown = await call(adminDelete('00000000-0000-4000-8000-000000000000'));
    const notOwn = await call(ownerDelete(carols.id, bob));

    // Assess
    expect(unknown.status).toBe(404);
    expect(notOwn.status).toBe(404);
    expect(cdn.calls).toEqual([]);
  });
});
