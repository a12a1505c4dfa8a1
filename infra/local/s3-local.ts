// Runs s3rver (an S3-compatible server on the filesystem) inside this process, its store made to behave as
// S3 does under concurrent writes, copies and deletes (npm start runs it in a child of its own:
// infra/local/stand-ins.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
  s3Writes(server.store, directory);
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => server.close(),
  };
}

/** Runs `write` once its folder exists, again when a concurrent delete removed the folder first (ENOENT). */
async function intoFolder<T>(path: string, write: () => Promise<T>, attempts = 5): Promise<T> {
  await mkdir(dirname(path), { recursive: true });
  return write().catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT' || attempts === 1) throw error;
    return intoFolder(path, write, attempts - 1);
  });
}

/**
 * S3 replaces an object in one step, and no write fails because a delete under the same prefix ran at the
 * same time. s3rver's store did not: a delete removes a key's folder once it looks empty, so a write into
 * it failed with ENOENT (a put's in a stream without an error listener, which ended the whole process), and
 * a copy unlinked its destination before copying. Here bytes go to a staging file beside the buckets (not
 * a directory, so never listed as one), then are renamed into their folder, made again when a delete took
 * it; a delete's cleanup leaves a folder that is gone or filled meanwhile to the other request. A listing
 * walks the folders with readdir then stat, so an entry a delete removed in between failed it (ENOENT, a 500
 * where S3 lists what is there): it is walked again.
 */
function s3Writes(store: S3rverStore, root: string): void {
  const staged = async (target: string, fill: (staging: string) => Promise<void>) => {
    const staging = join(root, `.${randomBytes(8).toString('hex')}.staging`);
    try {
      await fill(staging);
      await intoFolder(target, () => rename(staging, target));
    } finally {
      await rm(staging, { force: true });
    }
  };
  store.putObject = async ({ bucket, key, metadata, content }) => {
    const md5 = createHash('md5');
    let size = 0;
    const target = store.getResourcePath(bucket, key, 'object');
    await staged(target, async (staging) => {
      const counted = async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          md5.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      };
      const source = Readable.from(Buffer.isBuffer(content) ? [content] : content);
      await pipeline(source, counted, createWriteStream(staging));
      // The metadata first: the object then appears whole, its type already beside it.
      await intoFolder(target, () => store.putMetadata(bucket, key, metadata, md5.copy().digest('hex')));
    });
    return { size, md5: md5.digest('hex') };
  };
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, replacementMetadata) => {
    const source = store.getResourcePath(srcBucket, srcKey, 'object');
    const target = store.getResourcePath(destBucket, destKey, 'object');
    if (source !== target) await staged(target, (staging) => copyFile(source, staging));
    if (replacementMetadata) {
      await intoFolder(target, () => store.putMetadata(destBucket, destKey, replacementMetadata));
    } else if (source !== target) {
      for (const resource of ['metadata.json', 'object.md5']) {
        const to = store.getResourcePath(destBucket, destKey, resource);
        await intoFolder(to, () => copyFile(store.getResourcePath(srcBucket, srcKey, resource), to));
      }
    }
    return store.getMetadata(destBucket, destKey);
  };
  const list = store.listObjects.bind(store);
  store.listObjects = async (bucket, options) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await list(bucket, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw error;
      }
    }
  };
  store.deleteObject = async (bucket, key) => {
    const path = (resource: string) => store.getResourcePath(bucket, key, resource);
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) => rm(path(resource), { force: true })),
    );
    // S3 has no folders: empty ones go, up to the bucket's, until one is gone or no longer empty.
    let folder = dirname(path('object'));
    while (
      folder !== store.getBucketPath(bucket) &&
      (await rmdir(folder).then(
        () => true,
        () => false,
      ))
    )
      folder = dirname(folder);
  };
}
