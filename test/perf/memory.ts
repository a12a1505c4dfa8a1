// Peak memory of the files function's two write paths, in a process of its own (started by bench.ts with
// `--expose-gc`, configured for the same stand-ins): how far above its settled resident set one request
// takes it. Prints one line `MEMORY {json}`.
//
// - confirm of a presigned PNG of `upload.presign_max_bytes` (100 MiB by default) with a text chunk, with
//   stripping on (so confirm writes the stripped form): the object is written to incoming/ by a streamed
//   PutObject first (never whole in this process), then confirm reads it into one buffer (docs/UPLOADS.md);
// - a direct upload of 4 MiB (`upload.max_bytes`), its API Gateway event (base64 body) included, as the
//   event is in the function's memory too.
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { handler as uploadHandler } from '#functions/files/handler.ts';
import { incomingKey } from '#lib/files/prefixes.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';
import { buildMultipart } from '#test/support/images.ts';

const MIB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** A PNG of exactly `size` bytes: signature, IHDR, a tEXt, one IDAT of a repeated random block, IEND. */
function pngParts(
  size: number,
  width: number,
): { head: Buffer; block: Buffer; dataSize: number; tail: Buffer } {
  const u32 = (value: number) => {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(value >>> 0);
    return out;
  };
  const ihdr = Buffer.concat([u32(width), u32(1024), Buffer.from([8, 2, 0, 0, 0])]);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // A text chunk for the stripper to remove: confirm then writes the stripped form from memory, the more
  // demanding of its two ways to store.
  const text = Buffer.from('Comment\0taken at home');
  const textChunk = Buffer.concat([u32(text.length), Buffer.from('tEXt'), text, u32(0)]);
  const dataSize = size - 8 - 25 - textChunk.length - 12 - 12;
  const head = Buffer.concat([
    signature,
    u32(13),
    Buffer.from('IHDR'),
    ihdr,
    u32(0),
    textChunk,
    u32(dataSize),
    Buffer.from('IDAT'),
  ]);
  // The chunk CRCs are not checked by anyone on this path; zero keeps the generator streaming.
  const tail = Buffer.concat([u32(0), u32(0), Buffer.from('IEND'), u32(0xae426082)]);
  return { head, block: randomBytes(MIB), dataSize, tail };
}

function* pngChunks(parts: ReturnType<typeof pngParts>): Generator<Buffer> {
  yield parts.head;
  let left = parts.dataSize;
  while (left > 0) {
    const take = Math.min(left, parts.block.length);
    yield parts.block.subarray(0, take);
    left -= take;
  }
  yield parts.tail;
}

/** One PutObject of a stream whose SHA-256 is known, so the signer hashes nothing and nothing is buffered. */
async function putStreamed(key: string, body: Readable, length: number, sha256: string): Promise<void> {
  const command = new PutObjectCommand({
    Bucket: config.bucket_name,
    Key: key,
    Body: body,
    ContentLength: length,
    ContentType: 'image/png',
  });
  command.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers) request.headers['x-amz-content-sha256'] = sha256;
      return next(args);
    },
    { step: 'build', name: 'knownPayloadSha256' },
  );
  await s3Client(config.aws).send(command);
}

/** Highest resident set seen while `run` runs (sampled every millisecond and the kernel's high-water mark). */
async function peakAbove(run: () => Promise<unknown>): Promise<{ peak_mib: number; settled_mib: number }> {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  const settled = process.memoryUsage.rss();
  const maxBefore = process.resourceUsage().maxRSS * 1024;
  let sampled = settled;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, process.memoryUsage.rss());
  }, 1);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  sampled = Math.max(sampled, process.memoryUsage.rss());
  const maxAfter = process.resourceUsage().maxRSS * 1024;
  // The kernel's high-water mark counts only if this run raised it.
  const peak = maxAfter > maxBefore ? Math.max(sampled, maxAfter) : sampled;
  return {
    peak_mib: Number(((peak - settled) / MIB).toFixed(1)),
    settled_mib: Number((settled / MIB).toFixed(1)),
  };
}

async function main(): Promise<void> {
  const size = config.upload.presign_max_bytes;
  const admin = await createTestAccount({ role: 'admin' });
  const call = async (event: ReturnType<typeof apiEvent>, expected: number) => {
    const result = await uploadHandler(event, lambdaContext);
    if (result.statusCode !== expected)
      throw new Error(`${event.routeKey}: ${result.statusCode} ${result.body}`);
    return JSON.parse(result.body ?? '{}') as { data: { key: string } };
  };

  /** Presigns and stores a PNG of `bytes` under incoming/, streamed; answers the key to confirm. */
  const presigned = async (bytes: number, width: number) => {
    const grant = await call(
      apiEvent({
        method: 'POST',
        path: '/api/v1/upload/presign',
        headers: admin.headers,
        body: { mime_type: 'image/png', size: bytes },
      }),
      200,
    );
    const parts = pngParts(bytes, width);
    const hash = createHash('sha256');
    for (const chunk of pngChunks(parts)) hash.update(chunk);
    await putStreamed(
      incomingKey(grant.data.key),
      Readable.from(pngChunks(parts)),
      bytes,
      hash.digest('hex'),
    );
    return grant.data.key;
  };
  const confirm = (key: string) =>
    call(
      apiEvent({ method: 'POST', path: '/api/v1/upload/confirm', headers: admin.headers, body: { key } }),
      200,
    );

  // Warm-up: every module, client and key loaded before anything is measured.
  await confirm(await presigned(256 * 1024, 17));
  const warmPng = Buffer.concat([...pngChunks(pngParts(64 * 1024, 19))]);
  const directEvent = (bytes: Buffer) => {
    const form = buildMultipart([{ name: 'file', filename: 'm.png', contentType: 'image/png', data: bytes }]);
    return apiEvent({
      method: 'POST',
      path: '/api/v1/upload',
      body: form.body,
      headers: { ...admin.headers, 'content-type': form.contentType },
    });
  };
  await call(directEvent(warmPng), 200);

  // First, before the large objects have grown the heap: the direct upload of 4 MiB.
  const direct = await peakAbove(async () => {
    const png = Buffer.concat([...pngChunks(pngParts(config.upload.max_bytes, 5000 + (process.pid % 1000)))]);
    await call(directEvent(png), 200);
  });

  const key = await presigned(size, 1000 + (process.pid % 1000));
  const confirmPeak = await peakAbove(() => confirm(key));

  const report = {
    object_mib: Number((size / MIB).toFixed(1)),
    confirm_peak_rss_mib: confirmPeak.peak_mib,
    direct_upload_bytes: config.upload.max_bytes,
    direct_upload_peak_rss_mib: direct.peak_mib,
    settled_rss_mib: confirmPeak.settled_mib,
  };
  console.log(`MEMORY ${JSON.stringify(report)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
