// The local app (infra/local/app.ts) for one e2e test file: started before its tests, stopped after them.
import { afterAll, beforeAll } from 'vitest';
import { type LocalAppOptions, type RunningApp, startLocalApp } from '#infra/local/app.ts';
import { type HttpClient, httpClient } from './http-client.ts';

export type LocalAppSetup = Omit<LocalAppOptions, 'port'>;

/**
 * Registers the beforeAll that starts the app and the afterAll that stops it. `setup` runs in that beforeAll
 * first, for options that need something started (a function's own process); `timeout` is the beforeAll's.
 * Hooks the file registers later run after the start and before the stop.
 */
export function useLocalApp(
  setup: LocalAppSetup | (() => Promise<LocalAppSetup>) = {},
  timeout?: number,
): HttpClient {
  let app: RunningApp | undefined;
  beforeAll(async () => {
    const options = typeof setup === 'function' ? await setup() : setup;
    app = await startLocalApp({ ...options, port: 0 });
  }, timeout);
  afterAll(async () => {
    await app?.close();
  });
  return httpClient(() => {
    if (!app) throw new Error('the local app is not running: call it from a test or a later hook');
    return app.url;
  });
}
