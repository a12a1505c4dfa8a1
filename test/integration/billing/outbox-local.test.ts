// npm start's outbox drain (docs/DESIGN.md 14): the outbox-drain function in its own process with only its
// needs' environment (no bus locally, so the event goes to its log), fed by the poller of the table's
// stream on DynamoDB Local; a table made before the outbox gets its stream; and what was written while
// nothing drained (or whose stream records are gone) is delivered when the drain starts.
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { type LocalOutboxDrain, startLocalOutboxDrain } from '#infra/local/outbox-drain.ts';
import { ensureTable } from '#infra/local/provision.ts';
import type { OrderPaidDetail } from '#lib/billing/order-events.ts';
import { outboxKey } from '#lib/billing/outbox.ts';
import { localCredentials } from '#lib/platform/aws/local.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTableInput, TABLE_STREAM_VIEW } from '#lib/platform/db/keys.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDrainHandler } from '#test/support/outbox.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const dynamo = new DynamoDBClient({
  region: config.aws.region,
  endpoint: config.aws.dynamodb_endpoint!,
  credentials: localCredentials('dynamodb'),
});

let table: Table;
let admin: TestAccount;
let buyer: TestAccount;
let planId: string;

beforeAll(async () => {
  ({ table } = await provisionTestStack());
  [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
  const plan = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: { name: 'Local plan', amount_cents: 500 },
  });
  planId = plan.json.data.id;
});

afterAll(() => {
  dynamo.destroy();
});

async function paidMockOrder(): Promise<string> {
  const placed = await call('POST', '/api/v1/orders', {
    headers: buyer.headers,
    body: { plan_id: planId, provider: 'mock' },
  });
  const paid = await call('POST', `/api/v1/orders/${placed.json.data.id}/pay`, { headers: buyer.headers });
  expect(paid.status).toBe(200);
  return placed.json.data.id as string;
}

/** Waits (without a clock in the assertion) until `check` holds, for at most a minute. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the condition never held');
}

describe('the outbox drain of npm start', () => {
  let drainProcess: FunctionProcess | undefined;
  let running: LocalOutboxDrain | undefined;

  afterAll(async () => {
    await running?.stop();
    await drainProcess?.stop();
  });

  it('runs the drain in its own process with its needs’ environment; a paid order’s event reaches its log once', async () => {
    // Prepare: the outbox-drain process as startLocalFunctions starts it (its log at info, so the event
    // line shows), and the stream poller startLocalApp runs beside it.
    const env = localFunctionEnvironment('outbox-drain', config);
    const lines: string[] = [];
    drainProcess = await startFunctionProcess({
      name: 'outbox-drain',
      host: `${ROOT}infra/local/function-host.ts`,
      module: `${ROOT}functions/outbox-drain/handler.ts`,
      env: { ...env, LOG__LEVEL: 'info' },
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      output: (line) => lines.push(line),
      startTimeoutMs: 60_000,
    });
    const fn = drainProcess;
    running = startLocalOutboxDrain({
      aws: config.aws,
      tableName: config.table_name,
      invoke: (event) => fn.invoke(event as never),
      intervalMs: 200,
    });
    const eventsOf = (orderId: string) =>
      lines
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { message?: string; event?: string; detail?: OrderPaidDetail })
        .filter((entry) => entry.message === 'event' && entry.detail?.order_id === orderId);

    // Act: an order paid through the payments handler, as a user pays it.
    const orderId = await paidMockOrder();
    await eventually(() => eventsOf(orderId).length > 0);
    await running.poller.pollOnce();

    // Assess
    expect(env).toMatchObject({ TABLE_NAME: config.table_name });
    // The master key opens the webhook endpoints' secrets (docs/WEBHOOKS.md); the bucket it never reads.
    expect(env).toHaveProperty('MASTER_KEY__PROVIDER', 'local');
    expect(env).not.toHaveProperty('BUCKET_NAME');
    expect(env).not.toHaveProperty('AWS__EVENT_BUS_NAME');
    expect(eventsOf(orderId)).toHaveLength(1);
    expect(eventsOf(orderId)[0]).toMatchObject({
      event: 'order.paid',
      detail: { order_id: orderId, provider: 'mock', amount_cents: 500 },
    });
    expect(await table.get(outboxKey(orderId))).toMatchObject({ delivered_at: expect.any(String) });
  }, 120_000);
});

describe('local provisioning and start', () => {
  it('turns the stream on for a local table made before the outbox, and switches another view to the stack’s', async () => {
    // Prepare: tables of the old shape (no stream), and one with a keys-only stream.
    const { StreamSpecification: _, ...oldShape } = createTableInput(`${config.table_name}-old`);
    await dynamo.send(new CreateTableCommand(oldShape));
    const keysOnly = { ...createTableInput(`${config.table_name}-keys`) };
    keysOnly.StreamSpecification = { StreamEnabled: true, StreamViewType: 'KEYS_ONLY' };
    await dynamo.send(new CreateTableCommand(keysOnly));

    // Act
    await ensureTable(dynamo, oldShape.TableName!);
    await ensureTable(dynamo, keysOnly.TableName!);
    await ensureTable(dynamo, oldShape.TableName!);

    // Assess
    for (const name of [oldShape.TableName!, keysOnly.TableName!]) {
      const { Table: described } = await dynamo.send(new DescribeTableCommand({ TableName: name }));
      expect(described?.StreamSpecification).toEqual({
        StreamEnabled: true,
        StreamViewType: TABLE_STREAM_VIEW,
      });
      expect(described?.LatestStreamArn).toEqual(expect.any(String));
    }
  });

  it('delivers on start what was written while nothing drained, even when its stream records are gone', async () => {
    // Prepare: an order paid, then the table's stream re-made (its records gone), as after a migration.
    const orderId = await paidMockOrder();
    await dynamo.send(
      new UpdateTableCommand({ TableName: config.table_name, StreamSpecification: { StreamEnabled: false } }),
    );
    await ensureTable(dynamo, config.table_name);
    const published: OrderPaidDetail[] = [];
    const drain = testDrainHandler({ orderPaid: async (detail) => void published.push(detail) });

    // Act
    const started = startLocalOutboxDrain({
      aws: config.aws,
      tableName: config.table_name,
      invoke: (event) => drain(event as never),
      intervalMs: 200,
    });
    await eventually(() => published.some((detail) => detail.order_id === orderId));
    await started.poller.pollOnce();
    await started.stop();

    // Assess
    expect(published.filter((detail) => detail.order_id === orderId)).toHaveLength(1);
    expect(await table.get(outboxKey(orderId))).toMatchObject({ delivered_at: expect.any(String) });
  });
});
