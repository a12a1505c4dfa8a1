// The whole API on one local HTTP server, on stand-ins already running (endpoints come from config).

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dynamoClient } from '../aws/dynamodb.ts';
import { s3Client } from '../aws/s3.ts';
import { config } from '../config/index.ts';
import { masterKey } from '../crypto/index.ts';
import { log } from '../log.ts';
import type { FunctionGroup } from '../routes.ts';
import { serveStoredFileLocally } from '../upload/serve.ts';
import { FileStorage } from '../upload/storage.ts';
import { ensureBucket, ensureTable } from './provision.ts';
import { createLocalServer, type GroupHandler } from './server.ts';

// Imported on first use, like a Lambda cold start: a group's code loads only when it is called.
const HANDLERS: Record<FunctionGroup, () => Promise<{ handler: GroupHandler }>> = {
  auth: () => import('../../functions/auth/handler.ts'),
  upload: () => import('../../functions/upload/handler.ts'),
  files: () => import('../../functions/files/handler.ts'),
  payments: () => import('../../functions/payments/handler.ts'),
  'payment-callback': () => import('../../functions/payment-callback/handler.ts'),
};

export async function loadGroupHandler(group: FunctionGroup): Promise<GroupHandler> {
  return (await HANDLERS[group]()).handler;
}

export interface RunningApp {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startLocalApp(options: { port?: number } = {}): Promise<RunningApp> {
  await ensureTable(dynamoClient() as never, config.table_name);
  await ensureBucket(s3Client(), config.bucket_name);
  // The embedded master key is made on the first start, not on the first secret, so it can be backed up.
  await masterKey();
  const storage = new FileStorage(s3Client(), config.bucket_name);
  const server = createLocalServer({
    loadHandler: loadGroupHandler,
    // GET /i/<key> streams from storage, as CloudFront serves it from S3 in AWS (no Lambda size cap).
    direct: (request, response, url) => serveStoredFileLocally(storage, request, response, url),
    onError: (error) => log.error('local server failed a request', { error }),
  });
  const port = options.port ?? config.port;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://localhost:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
