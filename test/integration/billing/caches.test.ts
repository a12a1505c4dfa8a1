// What a payments container keeps (docs/PAYMENTS-GUIDE.md, "Hot reload and its cost"): the public plan
// catalogue for CATALOGUE_STALENESS_MS, seen at once by the container that changed it; an order is sold at
// the terms its container holds, so a plan switched off, repriced or deleted elsewhere sells at its old
// terms for at most that long, and never after; a container's first settings read failing is a clean
// refusal, and the next request loads them.
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs } from '#functions/payments/needs.ts';
import { orderKey } from '#lib/billing/orders.ts';
import { CATALOGUE_STALENESS_MS } from '#lib/billing/plan-catalog.ts';
import { planKey } from '#lib/billing/plans.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { failNext, INJECTED_MARKER, mentions } from '#test/support/faults.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { C_KEY, C_PID, call, captureLog } from './helpers.ts';

captureLog();
let table: Table;
let admin: TestAccount;
let buyer: TestAccount;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  // channel_c without an API address: its orders get a signed submit link, and no network is called.
  const saved = await call('PUT', '/api/v1/admin/payment', {
    headers: admin.headers,
    body: {
      channel_c: { enabled: true, pid: C_PID, key: C_KEY, gateway_url: 'http://127.0.0.1:9/' },
      current_password: admin.password,
    },
  });
  expect(saved.status).toBe(200);
});

/** Another payments container, on a clock the test moves, counting its catalogue queries. */
function otherContainer() {
  let at = Date.now();
  const clock = () => new Date(at);
  let catalogueQueries = 0;
  const client = dynamoClient(config.aws);
  const counting = {
    send: (command: unknown) => {
      const values = (command as { input?: { ExpressionAttributeValues?: Record<string, unknown> } }).input
        ?.ExpressionAttributeValues;
      if (command instanceof QueryCommand && values?.[':plans'] === 'plans') catalogueQueries += 1;
      return client.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  const deps = buildPaymentsDeps(
    testResources('payments', needs, {
      clock,
      provided: { table: new Table(counting, config.table_name, clock) },
    }),
  );
  const handler = createPaymentsHandler(() => deps);
  return {
    async request(
      method: string,
      path: string,
      options: { headers?: Record<string, string>; body?: object } = {},
    ) {
      const answer = await handler(
        apiEvent({ method, path, headers: options.headers ?? {}, ...options }),
        lambdaContext,
      );
      return { status: answer.statusCode, json: JSON.parse(answer.body ?? 'null'), raw: answer.body ?? '' };
    },
    advance(ms: number) {
      at += ms;
    },
    queries: () => catalogueQueries,
  };
}

const ids = (answer: { json: { data: Array<{ id: string }> } }) => answer.json.data.map((plan) => plan.id);

async function createPlan(name: string): Promise<string> {
  const created = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name, amount_cents: 300 },
  });
  expect(created.status).toBe(201);
  return created.json.data.id;
}

describe('the public plan catalogue', () => {
  it('is read once per staleness in a container; a change shows at once where it was made, later elsewhere', async () => {
    // Prepare
    const other = otherContainer();
    await other.request('GET', '/api/v1/plans');
    await other.request('GET', '/api/v1/plans');
    const queriesBefore = other.queries();

    // Act: a plan is created in this container.
    const added = await createPlan('Fresh plan');
    const here = await call('GET', '/api/v1/plans');
    const thereAtOnce = await other.request('GET', '/api/v1/plans');
    other.advance(CATALOGUE_STALENESS_MS);
    const thereLater = await other.request('GET', '/api/v1/plans');

    // Assess
    expect(queriesBefore).toBe(1);
    expect(ids(here)).toContain(added);
    expect(ids(thereAtOnce)).not.toContain(added);
    expect(ids(thereLater)).toContain(added);
    expect(other.queries()).toBe(2);
  });

  it('stops selling a plan switched off elsewhere within the staleness, and at once where it was switched off', async () => {
    // Prepare
    const planId = await createPlan('Soon gone');
    const other = otherContainer();
    expect(ids(await other.request('GET', '/api/v1/plans'))).toContain(planId);

    // Act
    const off = await call('PATCH', `/api/v1/admin/plans/${planId}`, {
      headers: admin.headers,
      body: { active: false },
    });
    const here = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });
    const within = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });
    other.advance(CATALOGUE_STALENESS_MS + 1);
    const after = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });

    // Assess: the stated staleness, no more.
    expect(off.status).toBe(200);
    expect(here.status).toBe(404);
    expect(within.status).toBe(201);
    expect(after.status).toBe(404);
  });
});

describe('an order placed in a container whose copy of the plan is behind the table', () => {
  /** A plan this container's catalogue holds, then changed in the table directly (as another container would). */
  async function planChangedBehindTheCatalogue(changes: Record<string, unknown>) {
    const planId = await createPlan(`Changed elsewhere ${Math.random()}`);
    const other = otherContainer();
    const listed = await other.request('GET', '/api/v1/plans');
    expect(listed.json.data.find((plan: { id: string }) => plan.id === planId)).toMatchObject({
      amount_cents: 300,
      active: true,
    });
    const names = Object.keys(changes);
    await table.update(planKey(planId), {
      UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name) => [`:${name}`, changes[name]])),
    });
    return { planId, other };
  }

  const ordersOf = async (account: TestAccount) =>
    (await call('GET', '/api/v1/orders', { headers: account.headers })).json.data.items as Array<{
      id: string;
      amount_cents: number;
    }>;

  it.each(['manual', 'mock', 'channel_c'])(
    'is sold at the new price once the staleness has passed (%s)',
    async (provider) => {
      // Prepare
      const payer = await createTestAccount();
      const { planId, other } = await planChangedBehindTheCatalogue({
        amount_cents: 450,
        quota_bytes: 4096,
        duration_days: 7,
      });
      const held = await other.request('POST', '/api/v1/orders', {
        headers: buyer.headers,
        body: { plan_id: planId, provider },
      });
      other.advance(CATALOGUE_STALENESS_MS + 1);

      // Act
      const order = await other.request('POST', '/api/v1/orders', {
        headers: payer.headers,
        body: { plan_id: planId, provider },
      });

      // Within the staleness: the terms the container (and its plans page) held.
      expect(held.json.data).toMatchObject({ plan_id: planId, amount_cents: 300 });

      // Assess: the answer, the stored order and every order the payer has are at the plan's terms now.
      expect(order.status).toBe(201);
      expect(order.json.data).toMatchObject({ plan_id: planId, amount_cents: 450, status: 'pending' });
      expect(await table.get(orderKey(order.json.data.id))).toMatchObject({
        amount_cents: 450,
        quota_bytes: 4096,
        duration_days: 7,
      });
      expect((await ordersOf(payer)).map((placed) => [placed.id, placed.amount_cents])).toEqual([
        [order.json.data.id, 450],
      ]);
      if (provider === 'channel_c') {
        // What the channel was given to collect is the new price, for the order that was recorded.
        const payUrl = new URL(order.json.data.pay_url);
        expect(payUrl.searchParams.get('money')).toBe('4.50');
        expect(payUrl.searchParams.get('out_trade_no')).toBe(order.json.data.id);
      }
    },
  );

  it.each([
    ['switched off', { active: false }],
    ['deleted', undefined],
  ] as const)(
    'is refused 404 and nothing is recorded once the staleness has passed, when the plan was %s',
    async (_change, changes) => {
      // Prepare
      const payer = await createTestAccount();
      const { planId, other } = await planChangedBehindTheCatalogue(changes ?? { amount_cents: 300 });
      if (!changes) await table.delete(planKey(planId));
      other.advance(CATALOGUE_STALENESS_MS + 1);

      // Act
      const answers = await Promise.all(
        ['manual', 'mock', 'channel_c'].map((provider) =>
          other.request('POST', '/api/v1/orders', {
            headers: payer.headers,
            body: { plan_id: planId, provider },
          }),
        ),
      );

      // Assess
      expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404]);
      expect(await ordersOf(payer)).toEqual([]);
    },
  );

  it('sells a plan stored before quotas (no quota_bytes, no duration_days) at its terms', async () => {
    // Prepare: the fields removed from the item, as plans stored before them are; a container loads it so.
    const planId = await createPlan('Stored before quotas');
    await table.update(planKey(planId), { UpdateExpression: 'REMOVE quota_bytes, duration_days' });
    const other = otherContainer();

    // Act
    const order = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });

    // Assess
    expect(order.status).toBe(201);
    expect(await table.get(orderKey(order.json.data.id))).toMatchObject({
      amount_cents: 300,
      quota_bytes: null,
      duration_days: 0,
    });
  });

  it('learns the change with one catalogue load after the staleness, for its orders and its plans page', async () => {
    // Prepare
    const { planId, other } = await planChangedBehindTheCatalogue({ amount_cents: 450 });
    other.advance(CATALOGUE_STALENESS_MS + 1);
    const queriesBefore = other.queries();

    // Act
    const first = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });
    const next = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });
    const listed = await other.request('GET', '/api/v1/plans');

    // Assess: one catalogue load after the staleness, and it shows the new price everywhere.
    expect([first.json.data.amount_cents, next.json.data.amount_cents]).toEqual([450, 450]);
    expect(other.queries()).toBe(queriesBefore + 1);
    expect(listed.json.data.find((plan: { id: string }) => plan.id === planId)?.amount_cents).toBe(450);
  });
});

describe('the payment settings of a container that holds none yet', () => {
  it('a failing settings read is a clean 503 and changes nothing; the retry loads them and settles once', async () => {
    // Prepare: a mock order, and a container that has not read the settings yet.
    const planId = await createPlan('Cold plan');
    const placed = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'mock' },
    });
    const orderId = placed.json.data.id as string;
    const cold = otherContainer();
    const fault = failNext(dynamoClient(config.aws) as never, {
      command: 'GetItemCommand',
      error: 'throttling',
      when: mentions('settings#payment'),
    });

    // Act
    const failed = await cold.request('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers });
    const pendingAfter = await call('GET', `/api/v1/orders/${orderId}`, { headers: buyer.headers });
    const retried = await cold.request('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers });
    const again = await cold.request('POST', `/api/v1/orders/${orderId}/pay`, { headers: buyer.headers });
    fault.remove();

    // Assess
    expect(fault.failed).toBe(1);
    expect(failed.status).toBe(503);
    expect(failed.raw).not.toContain(INJECTED_MARKER);
    expect(pendingAfter.json.data.status).toBe('pending');
    expect(retried.status).toBe(200);
    expect(retried.json.data).toMatchObject({ id: orderId, status: 'paid' });
    expect(again.json.data).toMatchObject({ status: 'paid', paid_at: retried.json.data.paid_at });
  });
});
