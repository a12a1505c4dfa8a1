import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startLocalApp } from '#infra/local/app.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();

describe('local HTTP server', () => {
  it('answers GET /healthz with the ok envelope', async () => {
    const response = await fetch(`${app.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ code: 0, message: 'ok', data: { status: 'ok' } });
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers an unknown path, or a known path with another method, with a 404 envelope', async () => {
    for (const [method, path] of [
      ['GET', '/nowhere'],
      ['DELETE', '/healthz'],
    ] as const) {
      const response = await fetch(`${app.url}${path}`, { method });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 404, data: null });
    }
  });

  it('refuses a body over the Lambda payload limit with a 413 envelope', async () => {
    const response = await fetch(`${app.url}/api/v1/upload`, {
      method: 'POST',
      body: Buffer.alloc(6 * 1024 * 1024 + 1),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 413 });
  });

  it('answers a browser front end on localhost with CORS, preflight included, and nobody else', async () => {
    const preflight = await fetch(`${app.url}/api/v1/upload`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');

    const simple = await fetch(`${app.url}/healthz`, { headers: { origin: 'http://localhost:5173' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');

    const stranger = await fetch(`${app.url}/api/v1/upload`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(stranger.status).toBe(403);
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });
});

/** This machine's first address other than loopback, if it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
}

/** Whether the server answers /healthz at this address. */
async function answersAt(host: string, port: number): Promise<boolean> {
  try {
    return (await fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(5000) })).ok;
  } catch {
    return false;
  }
}

describe('where npm start listens', () => {
  const outside = outsideAddress();

  async function withHost<T>(
    host: string | undefined,
    run: (port: number, url: string, address: string) => Promise<T>,
  ) {
    const before = process.env.HOST;
    if (host === undefined) delete process.env.HOST;
    else process.env.HOST = host;
    try {
      const started = await startLocalApp({ port: 0 });
      try {
        const address = started.server.address() as AddressInfo;
        return await run(address.port, started.url, address.address);
      } finally {
        await started.close();
      }
    } finally {
      if (before === undefined) delete process.env.HOST;
      else process.env.HOST = before;
    }
  }

  it('is loopback by default: the printed localhost URL answers, another interface does not', async () => {
    await withHost(undefined, async (port, url, address) => {
      expect(address).toBe('127.0.0.1');
      expect(url).toBe(`http://localhost:${port}`);
      expect(await answersAt('127.0.0.1', port)).toBe(true);
      expect((await fetch(`${url}/healthz`)).ok).toBe(true);
      if (outside) expect(await answersAt(outside, port)).toBe(false);
    });
  });

  it.skipIf(outside === undefined)('answers on every interface when HOST=0.0.0.0', async () => {
    await withHost('0.0.0.0', async (port, url) => {
      expect(url).toBe(`http://localhost:${port}`);
      expect(await answersAt(outside!, port)).toBe(true);
    });
  });
});
