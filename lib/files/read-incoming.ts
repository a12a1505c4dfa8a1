// Reading a presigned upload back for its confirmation: the object whole, in one buffer of its declared
// size, checked, stripped and measured as a direct upload is. CONFIRM_MAX_BYTES bounds that buffer.
import { createHash } from 'node:crypto';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { fileTooLarge, UploadError } from './errors.ts';
import { checkAndSniff } from './record.ts';
import { type StoredUpload, storedUpload } from './stored-bytes.ts';

/**
 * The largest object confirm reads, whatever `upload.presign_max_bytes` says. Confirm holds the object and
 * its stripped copy at once, so its peak is about twice the object above the function's resting memory:
 * a 100 MiB JPEG with metadata peaked at 335 MB resident, 128 MiB at 362 MB, in a function of 512 MB
 * (infra/service-function.ts, `io`); 160 MiB reached 428 MB, too close to leave room for the SDK's work.
 */
export const CONFIRM_MAX_BYTES = 128 * 1024 * 1024;

/** Nothing was PUT to the presigned URL yet. */
export class NotUploadedError extends Error {}

export interface ExpectedUpload {
  /** Where the presigned PUT went (`incoming/<key>`). */
  objectKey: string;
  /** The record key, for log lines. */
  key: string;
  /** The size and type the presign declared. */
  size: number;
  mimeType: string;
}

export interface IncomingLimits {
  allowedTypes: readonly string[];
  /** The presign limit in force (never above CONFIRM_MAX_BYTES). */
  limit: number;
  stripMetadata: boolean;
}

/** What confirm stores (with its facts) and the ETag of the version it read. */
export interface InspectedIncoming {
  upload: StoredUpload;
  etag: string | undefined;
}

export function checkSize(actual: number, declared: number, limit: number): void {
  if (actual > limit) throw fileTooLarge(limit);
  if (actual === 0) throw new UploadError('bad_request', 'file: is empty');
  if (actual !== declared) {
    throw new UploadError('bad_request', `file: is ${actual} bytes but ${declared} were declared`);
  }
}

/**
 * Reads the object once and answers what confirm stores. Errors in this order: 413 over the limit, 400
 * empty or not the declared size, 415 type (unknown, not allowed, not the declared one) or a container the
 * stripper refuses. Throws NotUploadedError when there is no object.
 */
export async function readIncoming(
  storage: FileStorage,
  expected: ExpectedUpload,
  limits: IncomingLimits,
): Promise<InspectedIncoming> {
  const object = await storage.open(expected.objectKey);
  if (!object) throw new NotUploadedError();
  const { limit } = limits;
  const body = object.body;
  const hash = createHash('sha256');
  // One buffer of the declared size, filled in place: a longer object is only counted, to name its size.
  const buffer = Buffer.allocUnsafe(Math.min(expected.size, limit));
  let size = 0;
  try {
    if (object.contentLength !== undefined) checkSize(object.contentLength, expected.size, limit);
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > limit) throw fileTooLarge(limit);
      if (size + chunk.length <= buffer.length) chunk.copy(buffer, size);
      hash.update(chunk);
      size += chunk.length;
    }
  } finally {
    body.destroy?.();
  }
  checkSize(size, expected.size, limit);
  const sniffed = await checkAndSniff(buffer, {
    allowed: limits.allowedTypes,
    maxBytes: limit,
    expectedMimeType: expected.mimeType,
  });
  const upload = storedUpload(buffer, sniffed, {
    strip: limits.stripMetadata,
    inputSha256: hash.digest('hex'),
    key: expected.key,
  });
  return { upload, etag: object.etag };
}
