// Runs s3rver (an S3-compatible server on the filesystem) inside this process.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import S3rver from 's3rver';

export interface RunningS3 {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startS3Local(options: { directory: string; port?: number }): Promise<RunningS3> {
  const directory = resolve(options.directory);
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    directory,
    silent: true,
    // Path-style only: bucket names are not resolved from Host headers.
    vhostBuckets: false,
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => server.close(),
  };
}
