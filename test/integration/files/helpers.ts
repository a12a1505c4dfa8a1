// Shared by the upload integration tests: calling the group handlers in process, multipart events, and
// counting what is in the bucket.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { handler as uploadHandler } from '#functions/files/handler.ts';
import { handler as renderHandler } from '#functions/render/handler.ts';
import type { PresignResult } from '#lib/files/presign.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { buildMultipart, type MultipartPart, makePng } from '#test/support/images.ts';
import { serviceKeyOf } from '#test/support/object-keys.ts';

export interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

export interface CallResult<T> {
  status: number;
  headers: Record<string, string>;
  body: Envelope<T>;
}

export async function callUpload<T = unknown>(input: EventInput): Promise<CallResult<T>> {
  const result = await uploadHandler(apiEvent(input), lambdaContext as Context);
  return {
    status: result.statusCode ?? 0,
    headers: (result.headers ?? {}) as Record<string, string>,
    body: parseBody(result) as Envelope<T>,
  };
}

/** GET /i/<key>, with or without a rendition query: the render group's one route. */
export async function callImage(input: EventInput) {
  return renderHandler(apiEvent(input), lambdaContext as Context);
}

export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/** POST /api/v1/upload with one `file` part (and optional other parts), as PicGo and browsers send it. */
export function uploadInput(
  auth: { authorization: string },
  file: { bytes: Buffer; filename?: string; contentType?: string } | undefined,
  extra: MultipartPart[] = [],
): EventInput {
  const parts: MultipartPart[] = [
    ...(file
      ? [
          {
            name: 'file',
            filename: file.filename ?? 'picture.png',
            contentType: file.contentType ?? 'image/png',
            data: file.bytes,
          },
        ]
      : []),
    ...extra,
  ];
  const { body, contentType } = buildMultipart(parts);
  return {
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...auth, 'content-type': contentType, 'content-length': String(body.length) },
  };
}

/** Every key in this test file's bucket under `prefix` (a service key's prefix), as the service names them. */
export async function bucketKeys(prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3Client(config.aws).send(
      new ListObjectsV2Command({
        Bucket: config.bucket_name,
        Prefix: objectKeyOf(prefix),
        ContinuationToken: token,
      }),
    );
    keys.push(...(page.Contents ?? []).map((object) => serviceKeyOf(object.Key ?? '')));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** A PNG no other test uploads (random colour and size), so dedupe never crosses tests. */
export function uniquePng(make: (w: number, h: number, rgb: [number, number, number]) => Buffer) {
  const rgb: [number, number, number] = [
    Math.floor(Math.random() * 256),
    Math.floor(Math.random() * 256),
    Math.floor(Math.random() * 256),
  ];
  const width = 2 + Math.floor(Math.random() * 30);
  const height = 2 + Math.floor(Math.random() * 30);
  return { bytes: make(width, height, rgb), width, height };
}

/** Presigns a fresh PNG for the owner and PUTs it as a client would; returns the key to confirm. */
export async function presignedUpload(
  headers: Record<string, string>,
  permission: 'private' | 'public' = 'private',
): Promise<string> {
  const { bytes } = uniquePng(makePng);
  const grant = await callUpload<PresignResult>({
    method: 'POST',
    path: '/api/v1/upload/presign',
    body: { mime_type: 'image/png', size: bytes.length, filename: 'shot.png', permission },
    headers,
  });
  const put = await fetch(grant.body.data.url, {
    method: 'PUT',
    body: bytes,
    // As signed; fetch sets the Content-Length from the body itself.
    headers: { 'Content-Type': grant.body.data.headers['Content-Type']! },
  });
  if (!put.ok) throw new Error(`presigned PUT answered ${put.status}`);
  return grant.body.data.key;
}
