// The local server plays the CDN (docs/CONTRIBUTING.md "Local is the cloud"): it keeps the origin secret in
// the data folder, as the stack keeps it in Secrets Manager, and adds it to every request it hands a
// function, with the viewer's address, as CloudFront does. Functions run by npm start read the same file.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '#lib/http/event.ts';
import { LOCAL_ORIGIN_SECRET_FILE, parseOriginSecrets } from '#lib/http/front-door.ts';

/** Creates the secret file on the first start (exclusively, so two starts agree); its path. */
export function ensureLocalOriginSecret(dataDir: string): string {
  const file = join(dataDir, LOCAL_ORIGIN_SECRET_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    const current = randomBytes(36).toString('base64url');
    writeFileSync(file, `${JSON.stringify({ current })}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}

/**
 * The headers the local CDN adds, written over anything the client sent. The file is read per request,
 * so editing it (a local rotation: the new value as `current`, the old as `previous`) takes effect at once
 * here and within `front_door.cache_seconds` in the functions.
 */
export function localEdgeHeaders(dataDir: string): (request: IncomingMessage) => Record<string, string> {
  const file = ensureLocalOriginSecret(dataDir);
  return (request) => ({
    [ORIGIN_VERIFY_HEADER]: parseOriginSecrets(readFileSync(file, 'utf8')).current,
    [VIEWER_ADDRESS_HEADER]: request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
  });
}
