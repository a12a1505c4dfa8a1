// Bans through the local server, as npm start runs them (docs/ABUSE.md "Bans"): the local server plays the
// CDN and names the viewer's socket address, so a ban on ::1 refuses what comes over IPv6 loopback on a
// route of every group, while 127.0.0.1 (the administrator) is served. meta and render run in processes
// of their own with only their needs' environment: the bans reach them through the need `bans`.
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.AUTH__IP_LIMIT_PER_MINUTE = '0';
  process.env.ADMIN__BOOTSTRAP__USERNAME = 'bans_root';
  process.env.ADMIN__BOOTSTRAP__PASSWORD = 'bans-root-password';
  // Each container reads the bans again every second here (30 s by default).
  process.env.ABUSE__BANS__REFRESH_SECONDS = '1';
});

import { localFunctionEnvironment } from '#infra/local/app.ts';
import { startFunctionProcess } from '#infra/local/function-process.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { config } from '#lib/platform/config/index.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const own = (name: FunctionGroup) =>
  startFunctionProcess({
    name,
    host: `${ROOT}infra/local/function-host.ts`,
    module: `${ROOT}functions/${name}/handler.ts`,
    env: { ...localFunctionEnvironment(name, config), ABUSE__BANS__REFRESH_SECONDS: '1' },
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    output: () => undefined,
    startTimeoutMs: 60_000,
  }).then((started) => [name, started] as const);

// The server stops the processes with it. Listening on both stacks: 127.0.0.1 and ::1 are two viewers.
const app = useLocalApp(
  async () => ({ host: '::', functions: new Map(await Promise.all([own('meta'), own('render')])) }),
  90_000,
);

const ROUTES: Array<[string, string]> = [
  ['POST', '/auth/login'],
  ['GET', '/api/v1/gallery'],
  ['GET', '/s/nosuchshare'],
  ['GET', '/healthz'],
  ['GET', '/i/2026/01/01/none.png?w=64&h=64&s=x'],
  ['GET', '/api/v1/plans'],
  ['POST', '/api/v1/payments/mock/callback'],
];

const port = () => new URL(app.url).port;
const from = (host: '127.0.0.1' | '[::1]', method: string, path: string, init: RequestInit = {}) =>
  fetch(`http://${host}:${port()}${path}`, {
    method,
    ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
    ...init,
  });

async function statuses(host: '127.0.0.1' | '[::1]') {
  const answers: Record<string, string> = {};
  for (const [method, path] of ROUTES) {
    const response = await from(host, method, path);
    const text = await response.text();
    answers[path] =
      `${response.status} ${text.includes('This address is banned: loopback six') ? 'banned' : ''}`;
  }
  return answers;
}

/** Past every container's refresh (abuse.bans.refresh_seconds: 1 here). */
const refreshed = () => new Promise((resolve) => setTimeout(resolve, 1100));

describe('bans through the local server', () => {
  it('refuses a banned viewer on every group, serves the others, and serves it again once lifted', async () => {
    const login = await from('127.0.0.1', 'POST', '/admin/auth/login', {
      body: JSON.stringify({ username: 'bans_root', password: 'bans-root-password' }),
      headers: { 'content-type': 'application/json' },
    });
    const { token } = ((await login.json()) as { data: { token: string } }).data;
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    // 127.0.0.1 may not ban its own address; it may ban ::1.
    const self = await from('127.0.0.1', 'POST', '/api/v1/admin/bans', {
      body: JSON.stringify({ cidr: '127.0.0.0/8', reason: 'me' }),
      headers: auth,
    });
    expect(self.status).toBe(400);
    const created = await from('127.0.0.1', 'POST', '/api/v1/admin/bans', {
      body: JSON.stringify({ cidr: '::1', reason: 'loopback six' }),
      headers: auth,
    });
    expect(created.status).toBe(201);
    const ban = ((await created.json()) as { data: { id: string; cidr: string } }).data;
    expect(ban.cidr).toBe('::1/128');

    await refreshed();
    const banned = await statuses('[::1]');
    for (const [, path] of ROUTES) expect(banned[path], path).toBe('403 banned');
    const served = await statuses('127.0.0.1');
    for (const [, path] of ROUTES) expect(served[path], path).not.toContain('banned');

    const lifted = await from('127.0.0.1', 'DELETE', `/api/v1/admin/bans/${ban.id}`, { headers: auth });
    expect(lifted.status).toBe(200);
    await refreshed();
    const again = await statuses('[::1]');
    for (const [, path] of ROUTES) expect(again[path], path).not.toContain('banned');
  }, 60_000);
});
