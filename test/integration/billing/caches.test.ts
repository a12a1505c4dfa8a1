// What a payments container keeps (docs/PAYMENTS-GUIDE.md, "Hot reload and its cost"): the public plan
// catalogue for CATALOGUE_STALENESS_MS, seen at once by the container that changed it; the plan an order
// buys is always read from the table, so a plan switched off can no longer be bought anywhere; a
// container's first settings read failing is a clean refusal, and the next request loads them.
import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs } from '#functions/payments/needs.ts';
import { CATALOGUE_STALENESS_MS } from '#lib/billing/plan-catalog.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { failNext, INJECTED_MARKER, mentions } from '#test/support/faults.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call, captureLog } from './helpers.ts';

captureLog();
let admin: TestAccount;
let buyer: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
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

  it('never sells a plan switched off, even in a container whose catalogue still lists it', async () => {
    // Prepare
    const planId = await createPlan('Soon gone');
    const other = otherContainer();
    expect(ids(await other.request('GET', '/api/v1/plans'))).toContain(planId);

    // Act
    const off = await call('PATCH', `/api/v1/admin/plans/${planId}`, {
      headers: admin.headers,
      body: { active: false },
    });
    const listed = await other.request('GET', '/api/v1/plans');
    const order = await other.request('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: planId, provider: 'manual' },
    });

    // Assess
    expect(off.status).toBe(200);
    expect(ids(listed)).toContain(planId);
    expect(order.status).toBe(404);
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
