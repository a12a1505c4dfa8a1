// An in-process stand-in for CloudFront KeyValueStore's data plane (REST-JSON, SigV4A): DescribeKeyValueStore
// and UpdateKeys on the stores the template declares, each write naming the store's current version (ETag)
// as AWS requires, so the edge's deny-list (lib/platform/cdn/kvs-deny-list.ts) is exercised as deployed.

export interface FakeKvsAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface FakeKeyValueStore {
  /** Each store's keys and values now, by store ARN. */
  readonly stores: Map<string, Map<string, string>>;
  handle(operation: string, kvsArn: string, ifMatch: string | undefined, body: Buffer): FakeKvsAnswer;
}

const PATH = /^\/key-value-stores\/([^/]+)(\/keys)?$/;

/** The operation and store of a request's path, or undefined when it is none the service calls. */
export function keyValueStoreRequest(
  method: string,
  pathname: string,
): { operation: 'DescribeKeyValueStore' | 'UpdateKeys'; kvsArn: string } | undefined {
  const match = PATH.exec(pathname);
  if (!match) return undefined;
  const kvsArn = decodeURIComponent(match[1]!);
  if (method === 'GET' && !match[2]) return { operation: 'DescribeKeyValueStore', kvsArn };
  if (method === 'POST' && match[2]) return { operation: 'UpdateKeys', kvsArn };
  return undefined;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): FakeKvsAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

const failure = (status: number, code: string, message: string) =>
  json(status, { message }, { 'x-amzn-errortype': code });

export function createFakeKeyValueStore(options: { storeArns: string[] }): FakeKeyValueStore {
  const stores = new Map(options.storeArns.map((arn) => [arn, new Map<string, string>()]));
  const versions = new Map(options.storeArns.map((arn) => [arn, 1]));
  const sizeOf = (store: Map<string, string>) =>
    [...store].reduce((total, [key, value]) => total + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
  return {
    stores,
    handle(operation, kvsArn, ifMatch, body) {
      const store = stores.get(kvsArn);
      if (!store) return failure(404, 'ResourceNotFoundException', `No key value store ${kvsArn}`);
      const etag = () => `E${versions.get(kvsArn)}`;
      const summary = () => ({ ItemCount: store.size, TotalSizeInBytes: sizeOf(store) });
      if (operation === 'DescribeKeyValueStore') {
        return json(200, { KvsARN: kvsArn, Created: Date.now() / 1000, ...summary() }, { etag: etag() });
      }
      if (ifMatch !== etag()) return failure(409, 'ConflictException', 'The key value store has changed');
      const { Puts = [], Deletes = [] } = JSON.parse(body.toString('utf8') || '{}') as {
        Puts?: Array<{ Key: string; Value: string }>;
        Deletes?: Array<{ Key: string }>;
      };
      for (const { Key, Value } of Puts) store.set(Key, Value);
      for (const { Key } of Deletes) store.delete(Key);
      versions.set(kvsArn, versions.get(kvsArn)! + 1);
      return json(200, summary(), { etag: etag() });
    },
  };
}
