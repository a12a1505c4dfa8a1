import { defineConfig } from 'vitest/config';

// Two projects: tests that touch no I/O (unit, template checks) start nothing, so `vitest run test/unit`
// is quick; the rest share one DynamoDB Local and one s3rver started by the global setup.
export default defineConfig({
  test: {
    // The SDK's notice that releases after January 2027 need Node 22; the lock file pins today's versions.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    pool: 'forks',
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
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/deployed/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/setup-env.ts'],
        },
      },
    ],
  },
});
