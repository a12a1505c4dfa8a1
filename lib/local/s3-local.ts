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
