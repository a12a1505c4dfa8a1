// Shared by the quota tests: PNGs of a chosen size, calling group handlers in process, and reading the
// usage item and the records it must agree with.
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { Context } from 'aws-lambda';
import type { OrderEventPublisher, OrderPaidDetail } from '#lib/billing/order-events.ts';
import { UsageRepository, usageKey } from '#lib/files/usage.ts';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { apiEvent, type EventInput, lambdaContext, parseBody } from '#test/support/events.ts';
import { scanTable } from '#test/support/faults.ts';
import { buildMultipart } from '#test/support/images.ts';

function chunk(type: string, data: Buffer): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/**
 * A valid PNG of random pixels, stored uncompressed, of about `approxBytes` (never less than ~120): its
 * bytes are unique, so no two uploads dedupe, and its size is close to what the test asks for.
 */
export function noisePng(approxBytes: number): Buffer {
  const width = 16;
  const rowBytes = 1 + width * 3;
  const height = Math.max(1, Math.floor((approxBytes - 80) / rowBytes));
  const rows = Array.from({ length: height }, () =>
    Buffer.concat([Buffer.from([0]), randomBytes(width * 3)]),
  );
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 0 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export interface Answer<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: { code: number; message: string; data: T };
}

type Handler = (event: ApiEvent, context: Context) => Promise<ApiResult>;

/** Calls a group handler (testDeps' `handlers.files`, `handlers.payments`...) as API Gateway would. */
export async function callHandler<T = unknown>(handler: Handler, input: EventInput): Promise<Answer<T>> {
  const result = await handler(apiEvent(input), lambdaContext as Context);
  return {
    status: result.statusCode ?? 0,
    headers: (result.headers ?? {}) as Record<string, string>,
    body: parseBody(result) as Answer<T>['body'],
  };
}

/**
 * An owner's delete for good (docs/UPLOADS.md "Trash"): DELETE moves the file to the trash, still counted;
 * deleting it from there gives its bytes back. The second answer.
 */
export async function deleteForGood(
  handler: Handler,
  id: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const trashed = await callHandler(handler, { method: 'DELETE', path: `/api/v1/files/${id}`, headers });
  if (trashed.status !== 200) return trashed;
  return callHandler(handler, { method: 'DELETE', path: `/api/v1/files/trash/${id}`, headers });
}

/** POST /api/v1/upload of one PNG. */
export function uploadEvent(headers: Record<string, string>, bytes: Buffer): EventInput {
  const { body, contentType } = buildMultipart([
    { name: 'file', filename: 'shot.png', contentType: 'image/png', data: bytes },
  ]);
  return {
    method: 'POST',
    path: '/api/v1/upload',
    body,
    headers: { ...headers, 'content-type': contentType, 'content-length': String(body.length) },
  };
}

/** An order.paid publisher that keeps what it was given. */
export function capturingPublisher(): OrderEventPublisher & { details: OrderPaidDetail[] } {
  const details: OrderPaidDetail[] = [];
  return {
    details,
    async orderPaid(detail) {
      details.push(detail);
    },
  };
}

/** The account's single usage item as stored (undefined before its first write). */
export function storedUsage(table: Table, accountId: string) {
  return table.get(usageKey(accountId));
}

/** The account's file records as stored, and what they add up to. */
export async function recordsOf(accountId: string) {
  const records = (await scanTable()).filter(
    (item) => item.pk.startsWith('file#') && item.owner_id === accountId,
  );
  return {
    records,
    bytes: records.reduce((sum, item) => sum + Number(item.size), 0),
    count: records.length,
  };
}

/** The usage counters (every usage item of the account, summed as the service reads them) and the records. */
export async function usageMatchesRecords(table: Table, accountId: string) {
  const [usage, stored] = await Promise.all([
    new UsageRepository({ table }).read(accountId),
    recordsOf(accountId),
  ]);
  return {
    used_bytes: usage.usedBytes,
    file_count: usage.fileCount,
    record_bytes: stored.bytes,
    record_count: stored.count,
  };
}
