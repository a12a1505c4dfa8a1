// The storage fields of plans (docs/DESIGN.md 11): quota_bytes and duration_days on create, update and view;
// every bad value a 400 naming the field, with nothing changed.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';

let admin: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  admin = await createTestAccount({ role: 'admin' });
});

const createPlan = (body: Record<string, unknown>) =>
  call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Storage plan', amount_cents: 990, ...body },
  });

const BAD_VALUES: Array<[string, unknown]> = [
  ['negative', -1],
  ['fractional', 1.5],
  ['a string', '1024'],
  ['absurdly large', 2 ** 53],
  ['a boolean', true],
  ['an object', { bytes: 1 }],
];

describe('plan storage fields', () => {
  it('stores and shows quota_bytes and duration_days; absent means no storage, permanent', async () => {
    // Act
    const granted = await createPlan({ quota_bytes: 10 * 1024 ** 3, duration_days: 30 });
    const bare = await createPlan({});
    const noStorage = await createPlan({ quota_bytes: null, duration_days: 0 });
    const listed = await call('GET', '/api/v1/plans');

    // Assess
    expect(granted.status).toBe(201);
    expect(granted.json.data).toMatchObject({ quota_bytes: 10 * 1024 ** 3, duration_days: 30 });
    expect(bare.json.data).toMatchObject({ quota_bytes: null, duration_days: 0 });
    expect(noStorage.json.data).toMatchObject({ quota_bytes: null, duration_days: 0 });
    expect(listed.json.data.find((plan: { id: string }) => plan.id === granted.json.data.id)).toMatchObject({
      quota_bytes: 10 * 1024 ** 3,
      duration_days: 30,
    });
  });

  it('stores bandwidth_bytes, lists it, changes it, and reads its absence as unlimited (null)', async () => {
    const capped = await createPlan({ bandwidth_bytes: 5 * 1024 ** 3 });
    const unlimited = await createPlan({});
    const changed = await call('PATCH', `/api/v1/admin/plans/${capped.json.data.id}`, {
      headers: admin.headers,
      body: { bandwidth_bytes: 1024 },
    });
    const listed = await call('GET', '/api/v1/admin/plans', { headers: admin.headers });

    expect(capped.json.data.bandwidth_bytes).toBe(5 * 1024 ** 3);
    expect(unlimited.json.data.bandwidth_bytes).toBeNull();
    expect(changed.json.data.bandwidth_bytes).toBe(1024);
    const byId = (id: string) => listed.json.data.find((plan: { id: string }) => plan.id === id);
    expect(byId(capped.json.data.id).bandwidth_bytes).toBe(1024);
    expect(byId(unlimited.json.data.id).bandwidth_bytes).toBeNull();
  });

  it('accepts zero for both (a plan of no bytes; a permanent plan)', async () => {
    const zero = await createPlan({ quota_bytes: 0, duration_days: 0 });
    expect(zero.status).toBe(201);
    expect(zero.json.data).toMatchObject({ quota_bytes: 0, duration_days: 0 });
  });

  for (const field of ['quota_bytes', 'bandwidth_bytes', 'duration_days'] as const) {
    it.each(BAD_VALUES)(
      `refuses ${field} %s on create with 400 naming the field, creating nothing`,
      async (_case, value) => {
        // Prepare
        const before = await call('GET', '/api/v1/admin/plans', { headers: admin.headers });

        // Act
        const answer = await createPlan({ [field]: value });

        // Assess
        expect(answer.status).toBe(400);
        expect(answer.json.code).toBe(400);
        expect(answer.json.message).toMatch(new RegExp(`^${field}: `));
        expect(answer.json.data.fields.map((problem: { field: string }) => problem.field)).toEqual([field]);
        const after = await call('GET', '/api/v1/admin/plans', { headers: admin.headers });
        expect(after.json.data).toHaveLength(before.json.data.length);
      },
    );

    it.each(BAD_VALUES)(
      `refuses ${field} %s on update with 400 naming the field, changing nothing`,
      async (_case, value) => {
        // Prepare
        const plan = (await createPlan({ quota_bytes: 2048, duration_days: 7 })).json.data;

        // Act
        const answer = await call('PATCH', `/api/v1/admin/plans/${plan.id}`, {
          headers: admin.headers,
          body: { [field]: value },
        });

        // Assess
        expect(answer.status).toBe(400);
        expect(answer.json.message).toMatch(new RegExp(`^${field}: `));
        const after = await call('GET', '/api/v1/admin/plans', { headers: admin.headers });
        expect(after.json.data.find((item: { id: string }) => item.id === plan.id)).toMatchObject({
          quota_bytes: 2048,
          duration_days: 7,
        });
      },
    );
  }

  it('refuses duration_days null (only the quota may be null: "grants no storage")', async () => {
    const answer = await createPlan({ duration_days: null });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toMatch(/^duration_days: /);
  });

  it('updates the fields alone, and clears the quota with null', async () => {
    // Prepare
    const plan = (await createPlan({ quota_bytes: 1000, duration_days: 1 })).json.data;

    // Act
    const longer = await call('PATCH', `/api/v1/admin/plans/${plan.id}`, {
      headers: admin.headers,
      body: { duration_days: 365 },
    });
    const cleared = await call('PATCH', `/api/v1/admin/plans/${plan.id}`, {
      headers: admin.headers,
      body: { quota_bytes: null },
    });

    // Assess
    expect(longer.status).toBe(200);
    expect(longer.json.data).toMatchObject({ quota_bytes: 1000, duration_days: 365, name: 'Storage plan' });
    expect(cleared.json.data).toMatchObject({ quota_bytes: null, duration_days: 365 });
  });
});
