// The S3 adapter (s3rver locally): immutable puts, conditional copies, streamed reads, prefix deletes and
// presigned URLs. Which key holds what is the files domain's (lib/files/prefixes.ts); where its bytes sit
// in the bucket is objectKeyOf's (a spread prefix for keys of the current layout), applied here to every
// key and prefix, so no caller ever spells a bucket key.
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { log } from '#lib/platform/log.ts';
import { objectKeyOf } from './object-keys.ts';

/** Keys are unique (uuid + random suffix) and their bytes never change, so caches may keep them forever. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** The payload hash SigV4 signs; when a request carries it, the signer takes it rather than hashing. */
const CONTENT_SHA256_HEADER = 'x-amz-content-sha256';

export interface StoredObject {
  body: Readable;
  contentType: string | undefined;
  contentLength: number | undefined;
  etag: string | undefined;
  lastModified: Date | undefined;
}

function isMissing(error: unknown): boolean {
  const candidate = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return (
    candidate?.name === 'NoSuchKey' ||
    candidate?.name === 'NotFound' ||
    candidate?.$metadata?.httpStatusCode === 404
  );
}

function isPreconditionFailed(error: unknown): boolean {
  const candidate = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return candidate?.name === 'PreconditionFailed' || candidate?.$metadata?.httpStatusCode === 412;
}

function unquoted(etag: string): string {
  return etag.replace(/^W\//, '').replaceAll('"', '');
}

/** The source of a conditional copy is not the version read; `landed` when the copy was made anyway. */
export class ObjectChangedError extends Error {
  override readonly name = 'ObjectChangedError';
  constructor(readonly landed: boolean) {
    super('the object changed since it was read');
  }
}

export class FileStorage {
  constructor(
    readonly client: S3Client,
    readonly bucket: string,
  ) {}

  /**
   * One PutObject of bytes already in memory, with the sniffed type and the immutable cache header. Given
   * their SHA-256 (lower-case hex, as the upload already computed it), the request's signature uses it
   * rather than hashing the bytes a second time (SigV4's x-amz-content-sha256).
   */
  async put(key: string, bytes: Buffer, contentType: string, sha256Hex?: string): Promise<void> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: objectKeyOf(key),
      Body: bytes,
      ContentLength: bytes.length,
      ContentType: contentType,
      CacheControl: IMMUTABLE_CACHE_CONTROL,
    });
    if (sha256Hex !== undefined) {
      command.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { headers?: Record<string, string> } | undefined;
          if (request?.headers) request.headers[CONTENT_SHA256_HEADER] = sha256Hex;
          return next(args);
        },
        { step: 'build', name: 'knownPayloadSha256' },
      );
    }
    await this.client.send(command);
  }

  /**
   * Copies `fromKey` server-side (no bytes through this process; the metadata is replaced, so the stored
   * object carries the sniffed type whatever the client sent) only if it still is the version whose ETag
   * the caller read (CopySourceIfMatch: S3 checks it atomically and answers 412). The copy's own ETag is
   * compared as well, because the local stand-in (s3rver) ignores the condition; an unencrypted or SSE-S3
   * single-part object and its copy share their ETag (the MD5 of the bytes). Throws ObjectChangedError
   * when the source is another version.
   */
  async copyIfMatch(fromKey: string, toKey: string, contentType: string, etag: string): Promise<void> {
    let copiedEtag: string | undefined;
    try {
      const output = await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: objectKeyOf(toKey),
          CopySource: `${this.bucket}/${objectKeyOf(fromKey).split('/').map(encodeURIComponent).join('/')}`,
          CopySourceIfMatch: etag,
          MetadataDirective: 'REPLACE',
          ContentType: contentType,
          CacheControl: IMMUTABLE_CACHE_CONTROL,
        }),
      );
      copiedEtag = output.CopyObjectResult?.ETag;
    } catch (error) {
      if (isPreconditionFailed(error)) throw new ObjectChangedError(false);
      throw error;
    }
    if (copiedEtag !== undefined && unquoted(copiedEtag) !== unquoted(etag)) {
      // Another copy of the same version may have landed on this key at the same moment (concurrent
      // confirms of one key; the local stand-in then reports a mixed answer): the key holds the version
      // read, whoever wrote it last, unless the source itself was replaced.
      if (unquoted((await this.etagOf(toKey)) ?? '') !== unquoted(etag)) throw new ObjectChangedError(true);
    }
  }

  /**
   * Copies `fromKey` to `toKey` server-side, type and headers kept (a file into the trash and back,
   * lib/files/trash.ts); false when `fromKey` holds nothing.
   */
  async copy(fromKey: string, toKey: string): Promise<boolean> {
    const source = objectKeyOf(fromKey).split('/').map(encodeURIComponent).join('/');
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: objectKeyOf(toKey),
          CopySource: `${this.bucket}/${source}`,
        }),
      );
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** The ETag of what the key holds now, or undefined when it holds nothing. */
  private async etagOf(key: string): Promise<string | undefined> {
    try {
      const output = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: objectKeyOf(key) }),
      );
      return output.ETag;
    } catch (error) {
      if ((error as { name?: string }).name === 'NotFound') return undefined;
      throw error;
    }
  }

  /**
   * The object as a stream, or undefined when there is none. The caller must consume or destroy it. Given
   * an ETag, only that version (S3 answers 412 otherwise: ObjectChangedError).
   */
  async open(key: string, ifMatch?: string): Promise<StoredObject | undefined> {
    try {
      const output = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: objectKeyOf(key),
          ...(ifMatch !== undefined ? { IfMatch: ifMatch } : {}),
        }),
      );
      return {
        body: output.Body as Readable,
        contentType: output.ContentType,
        contentLength: output.ContentLength,
        etag: output.ETag,
        lastModified: output.LastModified,
      };
    } catch (error) {
      if (isMissing(error)) return undefined;
      if (ifMatch !== undefined && isPreconditionFailed(error)) throw new ObjectChangedError(false);
      throw error;
    }
  }

  /** Whether an object is stored at `key` (a HEAD: no bytes move). */
  async exists(key: string): Promise<boolean> {
    return (await this.etagOf(key)) !== undefined;
  }

  /** Idempotent: deleting a missing key succeeds. */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKeyOf(key) }));
  }

  /**
   * Deletes every object under `prefix` (a file's renditions): one list and one batch delete per 1,000
   * keys. Idempotent; returns how many keys it deleted.
   */
  async deletePrefix(prefix: string): Promise<number> {
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: objectKeyOf(prefix),
          ...(token !== undefined ? { ContinuationToken: token } : {}),
        }),
      );
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
      if (keys.length > 0) {
        await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return deleted;
  }

  /**
   * A delete whose failure is logged, not thrown: for objects no record points to (a loser's copy, an
   * abandoned presign), which an answer must not fail over.
   */
  async deleteQuietly(key: string): Promise<void> {
    try {
      await this.delete(key);
    } catch (error) {
      log.warn('could not delete a stored object', { key, error });
    }
  }

  /**
   * A presigned PUT whose signature covers Content-Type and Content-Length (real S3 then refuses any other
   * type or size); `signingDate` is the service clock so expiry follows it.
   */
  async presignPut(
    key: string,
    options: { contentType: string; size: number; expiresInSeconds: number; signingDate: Date },
  ): Promise<string> {
    return getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: objectKeyOf(key),
        ContentType: options.contentType,
        ContentLength: options.size,
      }),
      {
        expiresIn: options.expiresInSeconds,
        signingDate: options.signingDate,
        signableHeaders: new Set(['content-type', 'content-length']),
      },
    );
  }

  /**
   * Streams `body` to `key` as a multipart upload of 8 MiB parts, two in flight: memory stays about 16 MiB
   * whatever the size (an account export's ZIP). A failure aborts the upload; nothing is left at `key`.
   */
  async putStream(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: objectKeyOf(key), Body: body, ContentType: contentType },
      partSize: 8 * 1024 * 1024,
      queueSize: 2,
    });
    await upload.done();
  }

  /**
   * A short-lived presigned GET (the Lambda answer for objects too big to return inline); `filename` makes
   * browsers save it under that name.
   */
  async presignGet(key: string, expiresInSeconds: number, filename?: string): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: objectKeyOf(key),
      ...(filename ? { ResponseContentDisposition: `attachment; filename="${filename}"` } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }
}
