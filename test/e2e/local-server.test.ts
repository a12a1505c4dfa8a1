// The local HTTP server's own answers: health, unknown routes, the payload limit and CORS.
import { describe, expect, it } from 'vitest';
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
