// `npm run bench:export`: the account-lifecycle worker's peak memory while it exports 1 GiB of files
// (docs/PERFORMANCE.md "Account export"), on DynamoDB Local and s3rver. One account gets EXPORT_BENCH_FILES
// originals (128 by default) of EXPORT_BENCH_MIB MiB (8) of random bytes, stored straight into the bucket
// with their records; then the production handler builds the export in this process and the peak resident
// set (the kernel's VmHWM, reset after seeding through /proc/self/clear_refs) and the peak heap (sampled
// every 10 ms) are printed, with the ZIP's size and the time. One last line `EXPORT_MEMORY {json}`.
// Never part of `npm test`.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoLocal } from '#infra/local/dynamodb-local.ts';
import { startStandInProcess } from '#infra/local/stand-ins.ts';

const FILES = Number(process.env.EXPORT_BENCH_FILES ?? 128);
const MIB = Number(process.env.EXPORT_BENCH_MIB ?? 8);

const highWaterMiB = () => {
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
};

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'service-export-bench-'));
  const [dynamo, s3] = await Promise.all([startDynamoLocal(), startStandInProcess('s3', scratch)]);
  try {
    // The configuration is read once, at the first import of lib/platform/config: set before importing any.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    process.env.APP_CONFIG_JSON = JSON.stringify({ stage: 'bench', base_url: 'http://localhost:3000' });
    process.env.LOG__LEVEL = 'silent';
    process.env.AWS__DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.AWS__S3_ENDPOINT = s3.endpoint;
    process.env.TABLE_NAME = 'bench';
    process.env.BUCKET_NAME = 'bench';
    process.env.DATA_DIR = join(scratch, 'data');
    const { provisionTestStack } = await import('#test/support/stack.ts');
    await provisionTestStack();
    const { createTestAccount } = await import('#test/support/accounts.ts');
    const { testDeps } = await import('#test/support/deps.ts');
    const { newFileItem } = await import('#lib/files/files.ts');
    const { handler } = await import('#functions/account-lifecycle/handler.ts');
    const { lambdaContext } = await import('#test/support/events.ts');
    const deps = testDeps();
    const owner = await createTestAccount();
    console.log(`seeding ${FILES} files of ${MIB} MiB ...`);
    for (let n = 0; n < FILES; n++) {
      const id = randomUUID();
      const filename = `${id}-${randomBytes(6).toString('hex')}.jpg`;
      const key = `2026/01/01/${filename}`;
      const bytes = randomBytes(MIB * 1024 * 1024);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await deps.storage.put(key, bytes, 'image/jpeg');
      const facts = {
        sha256,
        size: bytes.length,
        mimeType: 'image/jpeg',
        ext: 'jpg',
        kind: 'jpeg',
        width: 1,
        height: 1,
      };
      await deps.table.put(
        newFileItem({
          id,
          key,
          filename,
          facts: facts as never,
          permission: 'private',
          ownerId: owner.account.id,
          ownerRole: 'user',
          now: new Date(Date.now() + n),
          originalName: `bench-${n}.jpg`,
          baseUrl: deps.settings.base_url,
          listingShards: deps.settings.listing_shards,
        }),
      );
    }
    await deps.groups.files.exports.request(owner.account);
    // What seeding held is not the worker's: the peak starts again here.
    global.gc?.();
    writeFileSync('/proc/self/clear_refs', '5');
    const before = {
      rss: process.memoryUsage.rss() / 2 ** 20,
      heap: process.memoryUsage().heapUsed / 2 ** 20,
    };
    let heapPeak = before.heap;
    const timer = setInterval(() => {
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed / 2 ** 20);
    }, 10);
    const started = performance.now();
    const context = { ...lambdaContext, getRemainingTimeInMillis: () => 900_000 };
    const summary = await handler({ source: 'aws.events' }, context);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(timer);
    const latest = await deps.groups.files.exports.latest(owner.account);
    if (summary.exports !== 1 || latest?.state !== 'ready')
      throw new Error(`the export did not finish: ${JSON.stringify(latest)}`);
    const report = {
      files: FILES,
      input_mib: FILES * MIB,
      zip_mib: Math.round(((latest.size ?? 0) / 2 ** 20) * 10) / 10,
      seconds: Math.round(seconds * 10) / 10,
      rss_before_mib: Math.round(before.rss),
      peak_rss_mib: Math.round(highWaterMiB()),
      heap_before_mib: Math.round(before.heap),
      peak_heap_mib: Math.round(heapPeak),
    };
    console.log(
      `exported ${report.input_mib} MiB (${FILES} files) into a ${report.zip_mib} MiB ZIP in ${report.seconds} s; ` +
        `RSS ${report.rss_before_mib} MiB before, peak ${report.peak_rss_mib} MiB; heap ${report.heap_before_mib} MiB before, peak ${report.peak_heap_mib} MiB`,
    );
    console.log(`EXPORT_MEMORY ${JSON.stringify(report)}`);
  } finally {
    await Promise.allSettled([dynamo.stop(), s3.stop()]);
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
