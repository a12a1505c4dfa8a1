// The deny-list in CloudFront KeyValueStore (deny-list.ts): the store the /i/* viewer-request function
// reads (infra/edge.ts). Every write names the store's current version (its ETag) and gets the next one,
// so writes go one at a time, in batches; a version moved by another writer is read again and the batch
// retried. The store holds at most 5 MB: a write that leaves it over four fifths full is logged and
// counted (docs/CAPACITY.md "Workers"), before it refuses new keys.
import type { CloudFrontKeyValueStoreClient } from '@aws-sdk/client-cloudfront-keyvaluestore';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { concurrencyLimit } from '#lib/platform/throughput.ts';
import type { EdgeDenyList } from './deny-list.ts';

/** Keys put or deleted per UpdateKeys request. */
export const KVS_BATCH = 50;
/** A KeyValueStore's largest size. */
export const KVS_MAX_BYTES = 5 * 1024 * 1024;
/** Retries of a batch whose version another writer moved. */
const CONFLICT_RETRIES = 3;

export function keyValueStoreDenyList(
  client: () => Promise<CloudFrontKeyValueStoreClient>,
  kvsArn: string,
): EdgeDenyList {
  const oneAtATime = concurrencyLimit(1);
  let etag: string | undefined;

  async function update(puts: Array<{ Key: string; Value: string }>, deletes: Array<{ Key: string }>) {
    const [kvs, { DescribeKeyValueStoreCommand, UpdateKeysCommand }] = await Promise.all([
      client(),
      import('@aws-sdk/client-cloudfront-keyvaluestore'),
    ]);
    for (let attempt = 0; ; attempt++) {
      etag ??= (await kvs.send(new DescribeKeyValueStoreCommand({ KvsARN: kvsArn }))).ETag;
      try {
        const written = await kvs.send(
          new UpdateKeysCommand({
            KvsARN: kvsArn,
            IfMatch: etag,
            ...(puts.length > 0 ? { Puts: puts } : {}),
            ...(deletes.length > 0 ? { Deletes: deletes } : {}),
          }),
        );
        etag = written.ETag;
        if ((written.TotalSizeInBytes ?? 0) > KVS_MAX_BYTES * 0.8) {
          log.warn('the CDN deny-list is over four fifths full', { bytes: written.TotalSizeInBytes });
          recordMetric('DenyListNearlyFull');
        }
        return;
      } catch (error) {
        etag = undefined;
        const name = (error as { name?: string } | undefined)?.name;
        if (name !== 'ConflictException' || attempt >= CONFLICT_RETRIES) throw error;
      }
    }
  }

  const inBatches = <T>(entries: T[], write: (batch: T[]) => Promise<void>) =>
    oneAtATime(async () => {
      for (let start = 0; start < entries.length; start += KVS_BATCH)
        await write(entries.slice(start, start + KVS_BATCH));
    });
  const writeEntries = (puts: Array<[string, string]>, removals: string[]) =>
    inBatches([...puts, ...removals.map((key) => [key] as const)], (batch) =>
      update(
        batch.flatMap((entry) => (entry.length === 2 ? [{ Key: entry[0], Value: entry[1] }] : [])),
        batch.flatMap((entry) => (entry.length === 1 ? [{ Key: entry[0] }] : [])),
      ),
    );

  return {
    put: (keys, untilMs) =>
      writeEntries(
        keys.map((key) => [key, String(untilMs)]),
        [],
      ),
    remove: (keys) => writeEntries([], keys),
    write: writeEntries,
  };
}
