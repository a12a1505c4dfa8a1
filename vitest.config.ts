import { defineConfig } from 'vitest/config';

// Files that run last and alone: those that measure time (the timing and load tests), so no other file's
// load skews what they measure; and those that count what the whole table holds (every due channel order
// the reconciler sees, the usage of the static token's owner, the first administrator), which another
// file's orders or uploads would change under them.
const ALONE = [
  'test/integration/accounts/timing.test.ts',
  'test/integration/scale/load-mix.test.ts',
  'test/integration/billing/reconcile-schedule.test.ts',
  'test/integration/files/static-token-limits.test.ts',
  // Counts waits by the order calls start and end in: an upload's step of nine table calls beside one S3
  // call (the block list's look-ups, docs/MODERATION.md) must not be split by a loaded DynamoDB Local,
  // which answers them one at a time where AWS answers them at once.
  'test/integration/waits.test.ts',
];

// The workers' scale run seeds tens of thousands of items into DynamoDB Local, which answers every later
// request of that process about twenty times slower (its table dropped or not): so it runs after everything
// else, on stand-ins of its own.
const LAST = ['test/integration/scale/workers.test.ts'];

// Files that start whole processes (npm start, Chromium, every bundle): after the integration files, two at
// a time (each waits on its processes much of the time), before the ALONE ones.
const WHOLE_PROCESSES = ['test/e2e/**/*.test.ts', 'test/deployed/**/*.test.ts'];

// Five projects: tests that touch no I/O (unit, template checks) start nothing, so `vitest run test/unit`
// is quick; the integration tests share one DynamoDB Local and one s3rver started by the global setup, two
// files at a time (the machine's two cores: about a quarter off the run); then the WHOLE_PROCESSES files,
// two at a time, then the ALONE files, one by one, and last the LAST one, each group on stand-ins of its own.
const standIns = {
  globalSetup: ['test/support/global-setup.ts'],
  setupFiles: ['test/support/setup-env.ts'],
};

export default defineConfig({
  test: {
    // The SDK's notice that releases after January 2027 need Node 22; the lock file pins today's versions.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'no-stand-ins',
          include: ['test/unit/**/*.test.ts', 'test/infra/**/*.test.ts'],
          setupFiles: ['test/support/setup-unit.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'stand-ins',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...ALONE, ...WHOLE_PROCESSES, ...LAST],
          ...standIns,
        },
      },
      {
        extends: true,
        test: {
          name: 'whole-processes',
          include: WHOLE_PROCESSES,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          ...standIns,
        },
      },
      {
        extends: true,
        test: {
          name: 'stand-ins-alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
          ...standIns,
        },
      },
      {
        extends: true,
        test: {
          name: 'stand-ins-last',
          include: LAST,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
          ...standIns,
        },
      },
    ],
  },
});
