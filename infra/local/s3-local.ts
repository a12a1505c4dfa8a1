// Runs s3rver (an S3-compatible server on the filesystem) inside this process.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { copyFile, mkdir, rename, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import S3rver, { type S3rverStore } from 's3rver';

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
  atomicCopies(server.store);
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => server.close(),
  };
}

/**
 * S3's CopyObject replaces the destination in one step and leaves it untouched when the copy fails.
 * s3rver's unlinks the destination first and then copies, so a copy whose source vanished meanwhile
 * (concurrent confirms of one upload: the winner deletes `incoming/<key>`) deleted the object a record
 * already pointed to. Here the bytes go to a staging file renamed over the destination, as S3 behaves.
 */
function atomicCopies(store: S3rverStore): void {
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, replacementMetadata) => {
    const source = store.getResourcePath(srcBucket, srcKey, 'object');
    const target = store.getResourcePath(destBucket, destKey, 'object');
    if (source !== target) {
      await mkdir(dirname(target), { recursive: true });
      // Not a name s3rver lists: only paths ending in its object suffix are objects.
      const staging = `${target}.${randomBytes(6).toString('hex')}.copying`;
      try {
        await copyFile(source, staging);
        await rename(staging, target);
      } catch (error) {
        await unlink(staging).catch(() => undefined);
        throw error;
      }
    }
    if (replacementMetadata) {
      await store.putMetadata(destBucket, destKey, replacementMetadata);
    } else if (source !== target) {
      await Promise.all(
        ['metadata.json', 'object.md5'].map((resource) =>
          copyFile(
            store.getResourcePath(srcBucket, srcKey, resource),
            store.getResourcePath(destBucket, destKey, resource),
          ),
        ),
      );
    }
    return store.getMetadata(destBucket, destKey);
  };
}

/**
 * The same stand-in in a child process of its own: S3 is remote in AWS, so a measurement of our code must
 * not share its thread with the storage server's request handling and file writes (test/perf).
 */
export async function startS3LocalProcess(options: { directory: string }): Promise<RunningS3> {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), resolve(options.directory)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, S3_LOCAL_CHILD: '1' },
    },
  );
  const endpoint = await new Promise<string>((resolveEndpoint, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /S3_LOCAL_ENDPOINT=(\S+)/.exec(output);
      if (found) resolveEndpoint(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the S3 stand-in exited (${code}) before it listened`)));
  });
  return {
    endpoint,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

// Entry of the child process started above.
if (
  process.env.S3_LOCAL_CHILD === '1' &&
  process.argv[2] &&
  import.meta.url.endsWith(process.argv[1] ?? '\0')
) {
  const running = await startS3Local({ directory: process.argv[2] });
  process.stdout.write(`S3_LOCAL_ENDPOINT=${running.endpoint}\n`);
  process.once('SIGTERM', () => void running.stop().then(() => process.exit(0)));
}
