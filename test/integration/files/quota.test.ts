// Plans that grant storage (docs/DESIGN.md 11) against DynamoDB Local and s3rver: usage kept with every upload,
// confirm and delete; 507 over the quota with nothing stored; grants written by settlement (extend or
// replace), read-time expiry with no job; GET /api/v1/usage; data stored before quotas existed.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { orderKey } from '#lib/billing/orders.ts';
import { planKey } from '#lib/billing/plans.ts';
import { buildQuota } from '#lib/files/build-quota.ts';
import { PRESIGN_TTL_SECONDS, pendingKey } from '#lib/files/pending.ts';
import { incomingKey } from '#lib/files/prefixes.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import { DAY_MS } from '#lib/files/quota-model.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { findOrphans, listBucket } from '#test/support/faults.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import {
  callHandler,
  capturingPublisher,
  deleteForGood,
  noisePng,
  recordsOf,
  storedUsage,
  uploadEvent,
  usageMatchesRecords,
} from './quota-helpers.ts';

const DEFAULT_QUOTA = 3000;

let table: Table;
let admin: TestAccount;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  admin = await createTestAccount({ role: 'admin' });
});

interface Usage {
  used_bytes: number;
  file_count: number;
  quota_bytes: number | null;
  plan: { id: string; name: string; expires_at: string | null } | null;
}

/** The service on a clock the test moves, with a small default quota; order.paid captured (once drained). */
function service(clock = movableClock()) {
  const events = capturingPublisher();
  const deps = testDeps({ clock, events, defaultQuotaBytes: DEFAULT_QUOTA });
  const upload = <T>(input: Parameters<typeof callHandler>[1]) => callHandler<T>(deps.handlers.files, input);
  const payments = <T>(input: Parameters<typeof callHandler>[1]) =>
    callHandler<T>(deps.handlers.payments, input);
  /** A session issued on the service's clock (one issued earlier may have ended after the clock moved). */
  const session = async (account: TestAccount) => {
    const { token } = await deps.sessions.issue(account.account);
    return { authorization: `Bearer ${token}` };
  };
  return {
    deps,
    clock,
    events,
    upload,
    payments,
    session,
    /** The storage part of GET /api/v1/usage; nothing is served here, so its bandwidth part is nought, uncapped. */
    usage: async (headers: Record<string, string>) => {
      const { bandwidth_bytes_used, bandwidth_bytes, ...storage } = (
        await upload<Usage & { bandwidth_bytes_used: number; bandwidth_bytes: number | null }>({
          path: '/api/v1/usage',
          headers,
        })
      ).body.data;
      expect({ bandwidth_bytes_used, bandwidth_bytes }).toEqual({
        bandwidth_bytes_used: 0,
        bandwidth_bytes: null,
      });
      return storage;
    },
    createPlan: async (body: Record<string, unknown>) => {
      const created = await payments<{ id: string }>({
        method: 'POST',
        path: '/api/v1/admin/plans',
        headers: admin.headers,
        body: { amount_cents: 990, ...body },
      });
      expect(created.status).toBe(201);
      return created.body.data.id;
    },
    /** Places a mock order for the plan and pays it as its owner (POST /api/v1/orders/{id}/pay). */
    buy: async (buyer: TestAccount, planId: string) => {
      const headers = await session(buyer);
      const order = await payments<{ id: string }>({
        method: 'POST',
        path: '/api/v1/orders',
        headers,
        body: { plan_id: planId, provider: 'mock' },
      });
      expect(order.status).toBe(201);
      const paid = await payments<{ status: string }>({
        method: 'POST',
        path: `/api/v1/orders/${order.body.data.id}/pay`,
        headers,
      });
      expect(paid.status).toBe(200);
      return order.body.data.id;
    },
  };
}

/** An API token for the account: it never expires, so it still works after the clock moved by days. */
async function apiToken(deps: ReturnType<typeof testDeps>, account: TestAccount) {
  const { token } = await deps.uploads.tokens.create(account.account.id, 'quota test');
  return { authorization: `Bearer ${token}` };
}

describe('usage and the default quota', () => {
  it('starts at zero without a usage item, counts each upload, and shows the default quota', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();
    const before = await s.usage(user.headers);
    const beforeItem = await storedUsage(table, user.account.id);

    // Act
    const first = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(900)));
    const second = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(700)));
    const after = await s.usage(user.headers);

    // Assess
    expect(before).toEqual({ used_bytes: 0, file_count: 0, quota_bytes: DEFAULT_QUOTA, plan: null });
    expect(beforeItem).toBeUndefined();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(after).toEqual({
      used_bytes: first.body.data.size + second.body.data.size,
      file_count: 2,
      quota_bytes: DEFAULT_QUOTA,
      plan: null,
    });
  });

  it('answers 507 with {used_bytes, quota_bytes} over the quota and stores nothing', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();
    const kept = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(2000)));
    const objectsBefore = await listBucket();

    // Act
    const refused = await s.upload(uploadEvent(user.headers, noisePng(1500)));

    // Assess
    expect(kept.status).toBe(200);
    expect(refused.status).toBe(507);
    expect(refused.body).toEqual({
      code: 507,
      message: 'storage quota exceeded',
      data: { used_bytes: kept.body.data.size, quota_bytes: DEFAULT_QUOTA },
    });
    expect(await listBucket()).toEqual(objectsBefore);
    expect((await recordsOf(user.account.id)).count).toBe(1);
    expect(await s.usage(user.headers)).toMatchObject({ used_bytes: kept.body.data.size, file_count: 1 });
    expect(await findOrphans()).toEqual([]);
  });

  it('charges nothing for a dedupe hit, even at the quota', async () => {
    // Prepare: one file that leaves no room for another of its size.
    const s = service();
    const user = await createTestAccount();
    const bytes = noisePng(2000);
    const first = await s.upload<UploadRecord>(uploadEvent(user.headers, bytes));

    // Act
    const again = await s.upload<UploadRecord>(uploadEvent(user.headers, bytes));

    // Assess
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(await s.usage(user.headers)).toMatchObject({ used_bytes: first.body.data.size, file_count: 1 });
  });

  it('gives the bytes back on delete, so the refused upload then fits', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();
    const kept = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(2000)));
    const next = noisePng(1500);
    expect((await s.upload(uploadEvent(user.headers, next))).status).toBe(507);

    // Act
    const deleted = await deleteForGood(s.deps.handlers.files, kept.body.data.id, user.headers);
    const afterDelete = await s.usage(user.headers);
    const retried = await s.upload<UploadRecord>(uploadEvent(user.headers, next));

    // Assess
    expect(deleted.status).toBe(200);
    expect(afterDelete).toMatchObject({ used_bytes: 0, file_count: 0 });
    expect(retried.status).toBe(200);
    expect(await usageMatchesRecords(table, user.account.id)).toEqual({
      used_bytes: retried.body.data.size,
      file_count: 1,
      record_bytes: retried.body.data.size,
      record_count: 1,
    });
  });

  it('gives administrators no quota: null in /usage, uploads beyond the default stored and still counted', async () => {
    // Prepare
    const s = service();
    const boss = await createTestAccount({ role: 'admin' });

    // Act
    const uploaded = await s.upload<UploadRecord>(uploadEvent(boss.headers, noisePng(DEFAULT_QUOTA + 1000)));
    const usage = await s.usage(boss.headers);

    // Assess
    expect(uploaded.status).toBe(200);
    expect(usage).toEqual({
      used_bytes: uploaded.body.data.size,
      file_count: 1,
      quota_bytes: null,
      plan: null,
    });
  });

  it('answers /usage for an API token and for the static token (the first administrator: no quota)', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();
    const token = await apiToken(s.deps, user);

    // Act
    const byToken = await s.upload<Usage>({ path: '/api/v1/usage', headers: token });
    const byStatic = await s.upload<Usage>({
      path: '/api/v1/usage',
      headers: { authorization: `Bearer ${config.upload.api_token}` },
    });
    const anonymous = await s.upload({ path: '/api/v1/usage' });

    // Assess
    expect(byToken.body.data).toEqual({
      used_bytes: 0,
      file_count: 0,
      quota_bytes: DEFAULT_QUOTA,
      plan: null,
      bandwidth_bytes_used: 0,
      bandwidth_bytes: null,
    });
    if (config.upload.api_token) {
      expect(byStatic.status).toBe(200);
      expect(byStatic.body.data.quota_bytes).toBeNull();
    }
    expect(anonymous.status).toBe(401);
  });
});

describe('confirm and the quota', () => {
  async function presignAndPut(s: ReturnType<typeof service>, user: TestAccount, bytes: Buffer) {
    const grant = await s.upload<PresignResult>({
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: user.headers,
      body: { mime_type: 'image/png', size: bytes.length, filename: 'big.png' },
    });
    expect(grant.status).toBe(200);
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(incomingKey(grant.body.data.key)),
        Body: bytes,
        ContentType: 'image/png',
      }),
    );
    return grant.body.data.key;
  }

  it('reserves the bytes on confirm; over the quota 507 leaves the upload pending, and it confirms once room is made', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();
    // Presigned while there was room; a direct upload took it before the confirm.
    const key = await presignAndPut(s, user, noisePng(1500));
    const kept = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(2000)));
    const confirm = () =>
      s.upload<UploadRecord>({
        method: 'POST',
        path: '/api/v1/upload/confirm',
        headers: user.headers,
        body: { key },
      });

    // Act
    const refused = await confirm();
    const objectsAfterRefusal = await listBucket();
    const pendingAfterRefusal = await table.get(pendingKey(key));
    await deleteForGood(s.deps.handlers.files, kept.body.data.id, user.headers);
    const confirmed = await confirm();

    // Assess
    expect(refused.status).toBe(507);
    expect(refused.body.data).toEqual({ used_bytes: kept.body.data.size, quota_bytes: DEFAULT_QUOTA });
    expect(objectsAfterRefusal).toContain(incomingKey(key));
    expect(objectsAfterRefusal).not.toContain(key);
    expect(pendingAfterRefusal?.confirmed_file_id).toBeUndefined();
    expect(confirmed.status).toBe(200);
    expect(await s.usage(user.headers)).toMatchObject({
      used_bytes: confirmed.body.data.size,
      file_count: 1,
    });
    expect(await findOrphans()).toEqual([]);
  });

  it('charges nothing for a confirm of bytes the owner has already, even at the quota', async () => {
    // Prepare: the bytes presigned, then uploaded directly: the file leaves no room for another of its size.
    const s = service();
    const user = await createTestAccount();
    const bytes = noisePng(2000);
    const key = await presignAndPut(s, user, bytes);
    const first = await s.upload<UploadRecord>(uploadEvent(user.headers, bytes));

    // Act
    const confirmed = await s.upload<UploadRecord>({
      method: 'POST',
      path: '/api/v1/upload/confirm',
      headers: user.headers,
      body: { key },
    });

    // Assess
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data).toEqual(first.body.data);
    expect(await s.usage(user.headers)).toMatchObject({ used_bytes: first.body.data.size, file_count: 1 });
    expect(await listBucket()).not.toContain(key);
    expect(await findOrphans()).toEqual([]);
  });
});

describe('plans that grant storage', () => {
  it('grants the bought quota at once (mock cashier), with its end in /usage and in order.paid', async () => {
    // Prepare
    const s = service();
    const buyer = await createTestAccount();
    const planId = await s.createPlan({ name: 'Pro 30', quota_bytes: 50_000, duration_days: 30 });
    const paidAt = s.clock();

    // Act
    const orderId = await s.buy(buyer, planId);
    const usage = await s.usage(buyer.headers);
    const big = await s.upload(uploadEvent(buyer.headers, noisePng(DEFAULT_QUOTA + 2000)));

    // Assess
    const expiresAt = isoWithOffset(new Date(paidAt.getTime() + 30 * DAY_MS));
    expect(usage).toEqual({
      used_bytes: 0,
      file_count: 0,
      quota_bytes: 50_000,
      plan: { id: planId, name: 'Pro 30', expires_at: expiresAt },
    });
    expect(big.status).toBe(200);
    await s.deps.drainOutbox();
    const detail = s.events.details.find((event) => event.order_id === orderId);
    expect(detail?.grant).toEqual({
      plan_id: planId,
      plan_name: 'Pro 30',
      quota_bytes: 50_000,
      started_at: isoWithOffset(paidAt),
      expires_at: expiresAt,
    });
    expect((await table.get(orderKey(orderId)))?.grant).toMatchObject({
      order_id: orderId,
      quota_bytes: 50_000,
    });
  });

  it('extends the active plan from its current end; another plan replaces it from now; permanent plans never end', async () => {
    // Prepare
    const s = service();
    const t0 = s.clock().getTime();
    const buyer = await createTestAccount();
    const month = await s.createPlan({ name: 'Month', quota_bytes: 10_000, duration_days: 30 });
    const week = await s.createPlan({ name: 'Week', quota_bytes: 20_000, duration_days: 7 });
    const forever = await s.createPlan({ name: 'Forever', quota_bytes: 5_000 });
    const usage = async () => s.usage(await s.session(buyer));
    const expiresAt = async () => (await usage()).plan?.expires_at;

    // Act and assess, step by step
    await s.buy(buyer, month);
    expect(await expiresAt()).toBe(isoWithOffset(new Date(t0 + 30 * DAY_MS)));

    s.clock.advance(10 * DAY_MS);
    await s.buy(buyer, month);
    expect(await expiresAt()).toBe(isoWithOffset(new Date(t0 + 60 * DAY_MS)));

    await s.buy(buyer, week);
    expect(await usage()).toMatchObject({
      quota_bytes: 20_000,
      plan: { id: week, name: 'Week', expires_at: isoWithOffset(new Date(t0 + 17 * DAY_MS)) },
    });

    s.clock.advance(DAY_MS);
    await s.buy(buyer, forever);
    expect(await usage()).toMatchObject({ quota_bytes: 5_000, plan: { id: forever, expires_at: null } });
    s.clock.advance(3650 * DAY_MS);
    expect((await usage()).quota_bytes).toBe(5_000);
  });

  it('stops counting an ended grant at read time: the next upload over the default quota is 507, no job runs', async () => {
    // Prepare: a one-day plan bought, a file stored that only the plan makes room for.
    const s = service();
    const buyer = await createTestAccount();
    const token = await apiToken(s.deps, buyer);
    const planId = await s.createPlan({ name: 'Day pass', quota_bytes: 50_000, duration_days: 1 });
    await s.buy(buyer, planId);
    const stored = await s.upload<UploadRecord>(uploadEvent(token, noisePng(DEFAULT_QUOTA + 1000)));
    const usageItemBefore = await storedUsage(table, buyer.account.id);

    // Act: the day passes (only the clock moves).
    s.clock.advance(DAY_MS + 1000);
    const usage = await s.usage(token);
    const refused = await s.upload(uploadEvent(token, noisePng(500)));

    // Assess
    expect(stored.status).toBe(200);
    expect(usage).toEqual({
      used_bytes: stored.body.data.size,
      file_count: 1,
      quota_bytes: DEFAULT_QUOTA,
      plan: null,
    });
    expect(refused.status).toBe(507);
    expect(refused.body.data).toEqual({ used_bytes: stored.body.data.size, quota_bytes: DEFAULT_QUOTA });
    // Nothing rewrote the grant: it is still stored, it simply no longer counts.
    expect((await storedUsage(table, buyer.account.id))?.grant).toEqual(usageItemBefore?.grant);
  });

  it('grants on a manual write-off too', async () => {
    // Prepare
    const s = service();
    const buyer = await createTestAccount();
    const planId = await s.createPlan({ name: 'Manual', quota_bytes: 40_000, duration_days: 0 });
    const order = await s.payments<{ id: string }>({
      method: 'POST',
      path: '/api/v1/orders',
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });

    // Act
    const written = await s.payments({
      method: 'POST',
      path: `/api/v1/admin/orders/${order.body.data.id}/pay`,
      headers: admin.headers,
    });

    // Assess
    expect(written.status).toBe(200);
    expect(await s.usage(buyer.headers)).toMatchObject({ quota_bytes: 40_000, plan: { id: planId } });
  });

  it('grants what the order bought, not what the plan was edited to afterwards', async () => {
    // Prepare
    const s = service();
    const buyer = await createTestAccount();
    const planId = await s.createPlan({ name: 'Editable', quota_bytes: 30_000, duration_days: 0 });
    const order = await s.payments<{ id: string }>({
      method: 'POST',
      path: '/api/v1/orders',
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    await s.payments({
      method: 'PATCH',
      path: `/api/v1/admin/plans/${planId}`,
      headers: admin.headers,
      body: { quota_bytes: 1 },
    });

    // Act
    await s.payments({
      method: 'POST',
      path: `/api/v1/orders/${order.body.data.id}/pay`,
      headers: buyer.headers,
    });

    // Assess
    expect((await s.usage(buyer.headers)).quota_bytes).toBe(30_000);
  });

  it('writes no grant for a plan without storage (quota_bytes null): order.paid carries grant null', async () => {
    // Prepare: a storage plan already active.
    const s = service();
    const buyer = await createTestAccount();
    const storage = await s.createPlan({ name: 'Storage', quota_bytes: 10_000 });
    const sticker = await s.createPlan({ name: 'Sticker pack', quota_bytes: null });
    await s.buy(buyer, storage);

    // Act
    const orderId = await s.buy(buyer, sticker);

    // Assess
    expect(await s.usage(buyer.headers)).toMatchObject({ quota_bytes: 10_000, plan: { id: storage } });
    await s.deps.drainOutbox();
    expect(s.events.details.find((event) => event.order_id === orderId)?.grant).toBeNull();
    expect((await table.get(orderKey(orderId)))?.grant).toBeUndefined();
  });
});

describe('data stored before quotas', () => {
  it('reads a plan without the new fields as granting nothing, permanent; buying it grants nothing', async () => {
    // Prepare: a plan item as it was stored before quotas.
    const s = service();
    const buyer = await createTestAccount();
    const id = `legacy-${Date.now()}`;
    await table.put({
      ...planKey(id),
      id,
      name: 'Old plan',
      description: '',
      amount_cents: 100,
      active: true,
      created_at: isoWithOffset(new Date()),
      updated_at: isoWithOffset(new Date()),
      gsi2pk: 'plans',
      gsi2sk: `${new Date().toISOString()}#${id}`,
    });

    // Act
    const listed = await s.payments<Array<Record<string, unknown>>>({
      path: '/api/v1/admin/plans',
      headers: admin.headers,
    });
    await s.buy(buyer, id);

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((plan) => plan.id === id)).toMatchObject({
      quota_bytes: null,
      duration_days: 0,
    });
    expect(await s.usage(buyer.headers)).toMatchObject({ quota_bytes: DEFAULT_QUOTA, plan: null });
  });

  it('settles an order placed before quotas with what its plan grants now', async () => {
    // Prepare: an order item without the copied terms.
    const s = service();
    const buyer = await createTestAccount();
    const planId = await s.createPlan({ name: 'Upgraded', quota_bytes: 25_000, duration_days: 0 });
    const order = await s.payments<{ id: string }>({
      method: 'POST',
      path: '/api/v1/orders',
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    await table.update(orderKey(order.body.data.id), {
      UpdateExpression: 'REMOVE quota_bytes, duration_days',
    });

    // Act
    await s.payments({
      method: 'POST',
      path: `/api/v1/orders/${order.body.data.id}/pay`,
      headers: buyer.headers,
    });

    // Assess
    expect((await s.usage(buyer.headers)).quota_bytes).toBe(25_000);
  });
});

describe('reading usage for other capabilities', () => {
  it('reads many accounts at once, with each role’s quota', async () => {
    // Prepare
    const s = service();
    const [one, two] = await Promise.all([createTestAccount(), createTestAccount()]);
    const file = await s.upload<UploadRecord>(uploadEvent(one.headers, noisePng(800)));

    // Act
    const usages = await buildQuota({ table, defaultQuotaBytes: DEFAULT_QUOTA }).usagesOf([
      { id: one.account.id, role: 'user' },
      { id: two.account.id, role: 'user' },
      { id: admin.account.id, role: 'admin' },
    ]);

    // Assess
    expect(usages.get(one.account.id)).toEqual({
      used_bytes: file.body.data.size,
      file_count: 1,
      quota_bytes: DEFAULT_QUOTA,
      plan: null,
    });
    expect(usages.get(two.account.id)).toMatchObject({ used_bytes: 0, quota_bytes: DEFAULT_QUOTA });
    expect(usages.get(admin.account.id)?.quota_bytes).toBeNull();
  });
});

describe('contention as DynamoDB reports it', () => {
  /**
   * The next `times` transactions are cancelled with TransactionConflict, as DynamoDB answers when another
   * transaction holds one of the items (DynamoDB Local serialises instead, so it never says so itself).
   */
  function conflictNext(times: number) {
    const client = dynamoClient(config.aws) as unknown as {
      middlewareStack: {
        add(middleware: unknown, options: { step: 'initialize'; name: string; priority: 'high' }): void;
        remove(name: string): boolean;
      };
    };
    const name = `conflict-${Math.random()}`;
    let left = times;
    client.middlewareStack.add(
      (
        next: (args: { input: Record<string, unknown> }) => Promise<unknown>,
        context: { commandName?: string },
      ) =>
        async (args: { input: Record<string, unknown> }) => {
          if (context.commandName === 'TransactWriteItemsCommand' && left > 0) {
            left -= 1;
            const count = (args.input.TransactItems as unknown[]).length;
            throw Object.assign(new Error('Transaction cancelled'), {
              name: 'TransactionCanceledException',
              CancellationReasons: Array.from({ length: count }, (_, index) => ({
                Code: index === count - 1 ? 'TransactionConflict' : 'None',
              })),
            });
          }
          return next(args);
        },
      { step: 'initialize', name, priority: 'high' },
    );
    return { fired: () => times - left, release: () => client.middlewareStack.remove(name) };
  }

  it('retries an upload, a delete and a settlement that met a conflicting transaction; each counts once', async () => {
    // Prepare
    const s = service();
    const buyer = await createTestAccount();
    const planId = await s.createPlan({ name: 'Contended', quota_bytes: 40_000, duration_days: 0 });
    const headers = await s.session(buyer);
    const order = await s.payments<{ id: string }>({
      method: 'POST',
      path: '/api/v1/orders',
      headers,
      body: { plan_id: planId, provider: 'mock' },
    });

    // Act: two conflicts before each of the settlement, the first upload and the delete.
    const conflicts: Array<ReturnType<typeof conflictNext>> = [];
    const contended = async <T>(work: () => Promise<T>): Promise<T> => {
      const conflict = conflictNext(2);
      conflicts.push(conflict);
      try {
        return await work();
      } finally {
        conflict.release();
      }
    };
    const paid = await contended(() =>
      s.payments({ method: 'POST', path: `/api/v1/orders/${order.body.data.id}/pay`, headers }),
    );
    const uploaded = await contended(() => s.upload<UploadRecord>(uploadEvent(headers, noisePng(5000))));
    const kept = await s.upload<UploadRecord>(uploadEvent(headers, noisePng(900)));
    // The delete for good: to the trash, then out of it (docs/UPLOADS.md "Trash"), the latter contended.
    await s.upload({ method: 'DELETE', path: `/api/v1/files/${uploaded.body.data.id}`, headers });
    const deleted = await contended(() =>
      s.upload({ method: 'DELETE', path: `/api/v1/files/trash/${uploaded.body.data.id}`, headers }),
    );

    // Assess
    expect(conflicts.map((conflict) => conflict.fired())).toEqual([2, 2, 2]);
    expect([paid.status, uploaded.status, kept.status, deleted.status]).toEqual([200, 200, 200, 200]);
    expect(await s.usage(headers)).toMatchObject({
      used_bytes: kept.body.data.size,
      file_count: 1,
      quota_bytes: 40_000,
      plan: { id: planId },
    });
    await s.deps.drainOutbox();
    expect(s.events.details.filter((event) => event.order_id === order.body.data.id)).toHaveLength(1);
    expect(await findOrphans()).toEqual([]);
  });
});

describe('presign and the quota (issue 29, finding 8)', () => {
  const presign = (s: ReturnType<typeof service>, user: TestAccount, size: number) =>
    s.upload<PresignResult>({
      method: 'POST',
      path: '/api/v1/upload/presign',
      headers: user.headers,
      body: { mime_type: 'image/png', size, filename: 'big.png' },
    });

  it('refuses a presign over the remaining quota with 507, holding nothing for it', async () => {
    // Prepare: part of the quota used by a direct upload
    const s = service();
    const user = await createTestAccount();
    const kept = await s.upload<UploadRecord>(uploadEvent(user.headers, noisePng(1000)));
    const room = DEFAULT_QUOTA - kept.body.data.size;

    // Act
    const over = await presign(s, user, room + 1);
    const huge = await presign(s, user, 100 * 1024 * 1024);
    const exact = await presign(s, user, room);

    // Assess
    expect(over.status).toBe(507);
    expect(over.body.data).toEqual({ used_bytes: kept.body.data.size, quota_bytes: DEFAULT_QUOTA });
    expect([413, 507]).toContain(huge.status);
    expect(exact.status).toBe(200);
    expect((await storedUsage(table, user.account.id))?.presigned_bytes).toBe(room);
  });

  it('lets thirty concurrent presigns hold no more than the quota', async () => {
    // Prepare
    const s = service();
    const user = await createTestAccount();

    // Act: thirty presigns of a third of the quota at once
    const answers = await Promise.all(Array.from({ length: 30 }, () => presign(s, user, DEFAULT_QUOTA / 3)));

    // Assess: three hold the quota, the others are 507 (no 5xx, no 409)
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 507)).toHaveLength(27);
    const item = await storedUsage(table, user.account.id);
    expect(item?.presigned_bytes).toBe(DEFAULT_QUOTA);
    expect(Object.keys(item?.presigned ?? {})).toHaveLength(3);
  });

  it('gives the hold back when the upload is confirmed', async () => {
    // Prepare: a presigned upload of about a third of the quota, PUT
    const s = service();
    const user = await createTestAccount();
    const bytes = noisePng(1000);
    const grant = await presign(s, user, bytes.length);
    await s3Client(config.aws).send(
      new PutObjectCommand({
        Bucket: config.bucket_name,
        Key: objectKeyOf(incomingKey(grant.body.data.key)),
        Body: bytes,
        ContentType: 'image/png',
      }),
    );

    // Act
    const confirmed = await s.upload<UploadRecord>({
      method: 'POST',
      path: '/api/v1/upload/confirm',
      headers: user.headers,
      body: { key: grant.body.data.key },
    });
    const rest = await presign(s, user, DEFAULT_QUOTA - confirmed.body.data.size);

    // Assess: the rest of the quota could be presigned, so the confirmed bytes count once (as usage)
    expect(confirmed.status).toBe(200);
    expect(rest.status).toBe(200);
    const item = await storedUsage(table, user.account.id);
    expect(item?.presigned_bytes).toBe(DEFAULT_QUOTA - confirmed.body.data.size);
    expect(item?.used_bytes).toBe(confirmed.body.data.size);
  });

  it('counts an expired presign for nothing, and the next presign removes it', async () => {
    // Prepare: the whole quota presigned
    const s = service();
    const user = await createTestAccount();
    expect((await presign(s, user, DEFAULT_QUOTA)).status).toBe(200);
    const whileHeld = await presign(s, user, 1);

    // Act: fifteen minutes and a second later (the presign's own expiry)
    s.clock.advance(PRESIGN_TTL_SECONDS * 1000 + 1000);
    const afterExpiry = await presign(s, user, DEFAULT_QUOTA);

    // Assess
    expect(whileHeld.status).toBe(507);
    expect(afterExpiry.status).toBe(200);
    const item = await storedUsage(table, user.account.id);
    expect(Object.keys(item?.presigned ?? {})).toHaveLength(1);
    expect(item?.presigned_bytes).toBe(DEFAULT_QUOTA);
  });

  it('holds nothing for an administrator (no quota, no write)', async () => {
    const s = service();
    const answer = await presign(s, admin, 50_000);
    expect(answer.status).toBe(200);
    expect((await storedUsage(table, admin.account.id))?.presigned).toBeUndefined();
  });
});
