// The local server's /i/* hook as infra/local/app.ts wires it (the stand-in for the CDN's edge function,
// infra/local/edge.ts), alone on a port: what it leaves to the routes answers 299, so a test tells the
// edge's own answers (404 denied, 451 held, the file) from what would go on to a function.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localEdge } from '#infra/local/edge.ts';
import { serveStoredFileLocally } from '#lib/http/stored-file.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import { testStorage } from './deps.ts';
import { testTable } from './resources.ts';

/** `clock`: the time the edge reads records against (an expiring file's end), default the real one. */
export async function startLocalEdge(clock?: Clock): Promise<{ url: string; close(): Promise<void> }> {
  const storage = testStorage();
  const table = testTable(clock);
  const edge = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    void serveStoredFileLocally(
      storage,
      request,
      response,
      url,
      localEdge(table, { allow_empty: true }),
    ).then((handled) => {
      if (!handled) response.writeHead(299).end();
    });
  });
  await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(edge.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => edge.close(() => resolve())),
  };
}
