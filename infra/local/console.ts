// The web console's static files (web/dist, built by scripts/build-web.ts), served locally as the CDN
// serves them from the bucket's console/ prefix in AWS (README.md "Web console"): index.html at `/`, hashed
// assets under `/console/`, each with the console's Content-Security-Policy (the CDN's, infra/console-policy.ts).
import { createReadStream, existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { consoleContentSecurityPolicy } from '#infra/console-policy.ts';
import { SECURITY_HEADERS } from '#lib/http/envelope.ts';

export interface ConsoleSite {
  /** web/dist. Nothing is served while it holds no index.html. */
  directory: string;
  /** Origins the console may send requests to besides its own: where presigned uploads go. */
  uploadOrigins: readonly string[];
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

const CONSOLE_PREFIX = '/console/';

/** Answers `/`, `/index.html` and `/console/*` from the build; false for anything else (the API's). */
export function serveConsole(
  site: ConsoleSite,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
): boolean {
  const method = (request.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return false;
  const path = url.pathname;
  const isIndex = path === '/' || path === '/index.html' || path === '/console/' || path === '/console';
  if (!isIndex && !path.startsWith(CONSOLE_PREFIX)) return false;
  if (!existsSync(join(site.directory, 'index.html'))) return false;

  let relative: string;
  try {
    relative = isIndex ? 'index.html' : decodeURIComponent(path.slice(CONSOLE_PREFIX.length));
  } catch {
    relative = '';
  }
  const file = normalize(join(site.directory, relative));
  const inside = file.startsWith(site.directory.endsWith(sep) ? site.directory : `${site.directory}${sep}`);
  const headers = {
    ...SECURITY_HEADERS,
    'content-security-policy': consoleContentSecurityPolicy(site.uploadOrigins),
  };
  if (!relative || !inside || !existsSync(file) || !statSync(file).isFile()) {
    request.resume();
    response.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
    response.end('Not found');
    return true;
  }
  const stat = statSync(file);
  response.writeHead(200, {
    ...headers,
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': String(stat.size),
    // Assets carry a content hash in their name; index.html must be fetched again to find new ones.
    'cache-control': isIndex ? 'no-cache' : 'public, max-age=31536000, immutable',
  });
  if (method === 'HEAD') {
    response.end();
    return true;
  }
  createReadStream(file).pipe(response);
  return true;
}
