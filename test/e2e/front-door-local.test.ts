// Local is the cloud, for the front door: as npm start runs it, a function in its own process with only
// its needs' environment reads the origin secret from the data folder and refuses a request without it,
// while the local server, playing the CDN, adds it to every request it hands the function.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { config } from '#lib/platform/config/index.ts';
import { apiEvent } from '#test/support/events.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let files: FunctionProcess;

// The server hands `files` its requests, and stops its process with it.
const app = useLocalApp(async () => {
  files = await startFunctionProcess({
    name: 'meta',
    host: `${ROOT}infra/local/function-host.ts`,
    module: `${ROOT}functions/meta/handler.ts`,
    env: localFunctionEnvironment('meta', config),
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    output: () => undefined,
    startTimeoutMs: 60_000,
  });
  return { functions: new Map([['meta', files]]) };
}, 90_000);

describe('the front door, locally', () => {
  it('gives the function the local origin secret through its needs', () => {
    const env = localFunctionEnvironment('meta', config);

    expect(env.FRONT_DOOR__PROVIDER).toBe('local');
    expect(env.DATA_DIR).toBeTruthy();
    expect(env).not.toHaveProperty('FRONT_DOOR__SECRET_ID');
  });

  it('serves what comes through the local server, which adds the proof like the CDN', async () => {
    const response = await fetch(`${app.url}/healthz`, {
      // A client's own attempt at the headers is written over.
      headers: { 'x-origin-verify': 'forged-by-the-client-0000000000000000', 'x-viewer-address': '10.0.0.1' },
    });

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ code: 0, message: 'ok', data: { status: 'ok' } });
  });

  it('refuses a request that reaches the function without the proof', async () => {
    const result = await files.invoke(apiEvent({ path: '/healthz' }));

    expect(result.statusCode).toBe(403);
    expect(JSON.parse(String(result.body))).toMatchObject({ code: 403, data: null });
  });
});
