// npm start's reconciler: the same function in its own process with only the environment its needs imply
// (table, master key), run on a timer. With no channel configured a run asks nobody and changes nothing.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { startLocalSchedule } from '#infra/local/schedule.ts';
import { config } from '#lib/platform/config/index.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';
import { storedOrder } from './reconcile-support.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('the reconciler process of npm start', () => {
  let table: Table;
  let reconciler: FunctionProcess | undefined;

  beforeAll(async () => {
    ({ table } = await provisionTestStack());
  });

  afterAll(async () => {
    await reconciler?.stop();
  });

  it('gets only its needs’ environment, and with no channel configured leaves mock orders alone', async () => {
    // Prepare: only the mock is on (the test config); an order of it waits for its owner.
    const [admin, buyer] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
    const plan = await call('POST', '/api/v1/admin/plans', {
      headers: admin.headers,
      body: { name: 'Mock plan', amount_cents: 100 },
    });
    const order = await call('POST', '/api/v1/orders', {
      headers: buyer.headers,
      body: { plan_id: plan.json.data.id, provider: 'mock' },
    });
    const before = await storedOrder(table, order.json.data.id);
    const env = localFunctionEnvironment('reconciler', config);
    reconciler = await startFunctionProcess({
      name: 'reconciler',
      host: `${ROOT}infra/local/function-host.ts`,
      module: `${ROOT}functions/reconciler/handler.ts`,
      env,
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      output: () => {},
      startTimeoutMs: 60_000,
    });

    // Act
    const summary = await reconciler.invoke({
      source: 'aws.events',
      'detail-type': 'Scheduled Event',
    } as never);

    // Assess
    expect(env).toMatchObject({ TABLE_NAME: config.table_name, MASTER_KEY__PROVIDER: 'local' });
    expect(env).not.toHaveProperty('BUCKET_NAME');
    expect(env).not.toHaveProperty('AWS__EVENT_BUS_NAME');
    expect(summary).toMatchObject({ checked: 0, settled: 0, still_pending: 0, failed: 0, providers: {} });
    expect(await storedOrder(table, order.json.data.id)).toEqual(before);
  }, 120_000);
});

describe('the local schedule', () => {
  it('invokes the reconciler every interval with a scheduled event, one run at a time, until stopped', async () => {
    vi.useFakeTimers();
    try {
      // Prepare: a run that lasts until released
      const releases: Array<() => void> = [];
      const invoke = vi.fn(() => new Promise<unknown>((resolve) => releases.push(() => resolve({}))));
      const schedule = startLocalSchedule('reconciler', 300_000, invoke);

      // Act and assess
      await vi.advanceTimersByTimeAsync(299_000);
      expect(invoke).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(invoke).toHaveBeenCalledTimes(1);
      expect(invoke.mock.calls[0]).toEqual([
        expect.objectContaining({ source: 'aws.events', 'detail-type': 'Scheduled Event' }),
      ]);
      // Still running at the next tick: skipped, not overlapped.
      await vi.advanceTimersByTimeAsync(300_000);
      expect(invoke).toHaveBeenCalledTimes(1);
      releases.shift()!();
      await vi.advanceTimersByTimeAsync(300_000);
      expect(invoke).toHaveBeenCalledTimes(2);
      releases.shift()!();
      await schedule.stop();
      await vi.advanceTimersByTimeAsync(900_000);
      expect(invoke).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never runs with the interval 0 or without a reconciler process', async () => {
    vi.useFakeTimers();
    try {
      const invoke = vi.fn(async () => ({}));
      const off = startLocalSchedule('reconciler', 0, invoke);
      const inProcess = startLocalSchedule('reconciler', 300_000);
      await vi.advanceTimersByTimeAsync(3_600_000);
      expect(invoke).not.toHaveBeenCalled();
      await Promise.all([off.stop(), inProcess.stop()]);
    } finally {
      vi.useRealTimers();
    }
  });
});
