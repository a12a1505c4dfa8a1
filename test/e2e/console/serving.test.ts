// How the local server serves the built console (infra/local/console.ts), as the CDN does in AWS: index.html
// at / and assets under /console/, each with the console's CSP; the API's paths stay the API's. Also the
// build itself: rebuilt when a source is newer, and its initial load within the 150 KB gzipped.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleContentSecurityPolicy } from '#infra/console-policy.ts';
import { createLocalServer } from '#infra/local/server.ts';
import { ensureWebBuild, WEB_DIST, webBuildIsCurrent } from '../../../scripts/build-web.ts';

const site = mkdtempSync(join(tmpdir(), 'console-site-'));
const S3_ORIGIN = 'http://127.0.0.1:4569';
let server: Server;
let base: string;
const apiCalls: string[] = [];

beforeAll(async () => {
  mkdirSync(join(site, 'assets'));
  writeFileSync(join(site, 'index.html'), '<!doctype html><title>Console</title>');
  writeFileSync(join(site, 'assets', 'index-abc123.js'), 'console.log(1);');
  writeFileSync(join(tmpdir(), 'outside-console.txt'), 'secret');
  server = createLocalServer({
    loadHandler: async () => async (event) => {
      apiCalls.push(event.rawPath);
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"code":0}' };
    },
    console: { directory: site, uploadOrigins: [S3_ORIGIN] },
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(site, { recursive: true, force: true });
  rmSync(join(tmpdir(), 'outside-console.txt'), { force: true });
});

describe('local console serving', () => {
  it('serves index.html at / and hashed assets under /console/, each with the strict CSP', async () => {
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(await index.text()).toContain('<title>Console</title>');
    const policy = index.headers.get('content-security-policy')!;
    expect(policy).toBe(consoleContentSecurityPolicy([S3_ORIGIN]));
    expect(policy.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        // The CDN's policy (infra/console-policy.ts): upload previews are data: and blob: images.
        "img-src 'self' data: blob:",
        `connect-src 'self' ${S3_ORIGIN}`,
        "frame-ancestors 'none'",
      ]),
    );
    expect(policy).not.toContain('unsafe');

    const asset = await fetch(`${base}/console/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-security-policy')).toBe(policy);
    expect(await asset.text()).toBe('console.log(1);');
    expect(apiCalls).toEqual([]);
  });

  it('answers 404 for a missing asset or a path out of the build, never a file outside it', async () => {
    for (const path of [
      '/console/assets/missing.js',
      '/console/..%2Foutside-console.txt',
      '/console/assets/..%2F..%2Foutside-console.txt',
      '/console/assets/',
    ]) {
      const answer = await fetch(`${base}${path}`);
      expect(answer.status, path).toBe(404);
      expect(await answer.text()).not.toContain('secret');
    }
    expect(apiCalls).toEqual([]);
  });

  it('leaves every other path and method to the API', async () => {
    apiCalls.length = 0;
    expect((await fetch(`${base}/api/v1/plans`)).status).toBe(200);
    expect((await fetch(`${base}/`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(apiCalls).toEqual(['/api/v1/plans', '/']);
  });
});

describe('console build', () => {
  it('counts as stale when a source is newer than the build, current once built after it', () => {
    const root = mkdtempSync(join(tmpdir(), 'console-root-'));
    try {
      mkdirSync(join(root, 'src'));
      mkdirSync(join(root, 'dist'));
      writeFileSync(join(root, 'index.html'), '');
      writeFileSync(join(root, 'src', 'app.tsx'), '');
      expect(webBuildIsCurrent(root)).toBe(false); // no build at all
      writeFileSync(join(root, 'dist', 'index.html'), '');
      const past = new Date(Date.now() - 60_000);
      for (const path of ['index.html', 'src', 'src/app.tsx']) utimesSync(join(root, path), past, past);
      expect(webBuildIsCurrent(root)).toBe(true);
      writeFileSync(join(root, 'src', 'app.tsx'), 'changed');
      expect(webBuildIsCurrent(root)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('loads initially under 150 KB gzipped: index.html and what it references, no inline script', async () => {
    await ensureWebBuild();
    const html = readFileSync(join(WEB_DIST, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // every script is a file (CSP script-src 'self')
    expect(html).not.toMatch(/<style|style="/);
    const referenced = [...html.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((match) => match[1]!);
    expect(referenced.some((path) => path.endsWith('.js'))).toBe(true);
    const gzipped = [html, ...referenced.map((path) => readFileSync(join(WEB_DIST, path)))].reduce(
      (total, content) => total + gzipSync(content, { level: 9 }).length,
      0,
    );
    expect(gzipped).toBeLessThan(150 * 1024);
  }, 60_000);
});
