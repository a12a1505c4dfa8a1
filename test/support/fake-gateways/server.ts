// A loopback-only HTTP server for fake gateways, with a clean asynchronous close().

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  /** Path plus query string, as the client sent it. */
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface FakeReply {
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** Cut the connection instead of answering (a channel that is unreachable). */
  destroy?: boolean;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` without a trailing slash. */
  baseUrl: string;
  /** Every request received, oldest first, for assertions. */
  requests: FakeRequest[];
  close(): Promise<void>;
}

export async function startLoopbackServer(
  answer: (request: FakeRequest) => FakeReply | Promise<FakeReply>,
): Promise<LoopbackServer> {
  const requests: FakeRequest[] = [];
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: FakeRequest = {
        method: incoming.method ?? 'GET',
        url: incoming.url ?? '/',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      Promise.resolve(answer(request))
        .then((reply) => {
          if (reply.destroy) {
            incoming.socket.destroy();
            return;
          }
          outgoing.writeHead(reply.status, reply.headers ?? {});
          outgoing.end(reply.body);
        })
        .catch(() => {
          outgoing.writeHead(500);
          outgoing.end('fake gateway failure');
        });
    });
  });
  // Keep-alive sockets from the SDKs' agents would otherwise hold close() open.
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
