// npm start's takedowns worker: the same function in its own process with only the environment its needs
// imply (the table; no distribution locally), run every minute. With no CDN it clears the pending batch.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { LOCAL_TAKEDOWN_INTERVAL_MS, startLocalSchedule } from '#infra/local/schedule.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { callUpload, uniquePng, uploadInput } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('the takedowns process of npm start', () => {
  let worker: FunctionProcess | undefined;

  beforeAll(async () => {
    await provisionTestStack();
  });

  afterAll(async () => {
    await worker?.stop();
  });

  it('gets only its needs’ environment, and clears a takedown with no CDN to send it to', async () => {
    // Prepare: the back office takes a file down.
    const [admin, owner] = await Promise.all([createTestAccount({ role: 'admin' }), createTestAccount()]);
    const uploaded = await callUpload<UploadRecord>(
      uploadInput(owner.headers, { bytes: uniquePng(makePng).bytes }),
    );
    const deleted = await callUpload({
      method: 'DELETE',
      path: `/api/v1/admin/files/${uploaded.body.data.id}`,
      headers: admin.headers,
    });
    const env = localFunctionEnvironment('takedowns', config);
    worker = await startFunctionProcess({
      name: 'takedowns',
      host: `${ROOT}infra/local/function-host.ts`,
      module: `${ROOT}functions/takedowns/handler.ts`,
      env,
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      output: () => {},
      startTimeoutMs: 60_000,
    });

    // Act
    const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event' } as never;
    const first = await worker.invoke(scheduled);
    const second = await worker.invoke(scheduled);

    // Assess
    expect(deleted.status).toBe(200);
    expect(env).toMatchObject({ TABLE_NAME: config.table_name });
    expect(env).not.toHaveProperty('CDN__DISTRIBUTION_ID');
    expect(env).not.toHaveProperty('BUCKET_NAME');
    expect(first).toMatchObject({ denied: 1, paths: 1, invalidations: 1, more: false });
    expect(second).toMatchObject({ denied: 0, paths: 0, invalidations: 0, more: false });
  }, 120_000);
});

describe('the local schedule', () => {
  it('invokes the worker every minute, one run at a time, until stopped', async () => {
    vi.useFakeTimers();
    try {
      // Prepare: a run that lasts until released
      const releases: Array<() => void> = [];
      const invoke = vi.fn(() => new Promise<unknown>((resolve) => releases.push(() => resolve({}))));
      const schedule = startLocalSchedule('takedowns', LOCAL_TAKEDOWN_INTERVAL_MS, invoke);

      // Act and assess
      await vi.advanceTimersByTimeAsync(LOCAL_TAKEDOWN_INTERVAL_MS - 1_000);
      expect(invoke).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(invoke).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(LOCAL_TAKEDOWN_INTERVAL_MS);
      expect(invoke).toHaveBeenCalledTimes(1);
      releases.shift()?.();
      await vi.advanceTimersByTimeAsync(LOCAL_TAKEDOWN_INTERVAL_MS);
      expect(invoke).toHaveBeenCalledTimes(2);
      releases.shift()?.();
      await schedule.stop();
      await vi.advanceTimersByTimeAsync(LOCAL_TAKEDOWN_INTERVAL_MS * 3);
      expect(invoke).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
