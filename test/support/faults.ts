// Failure injection into the SDK clients of this process, and the post-state checks that go with it:
// what a partial write or an orphan object would look like in the table and the bucket.
//
// `failNext(client, ...)` adds an `initialize`-step middleware to the client's stack. It throws before the
// request is built, so the SDK's own retries (they live in the later `finalizeRequest` step) never see it:
// one injected failure is one `send` that failed all of its attempts, as the caller would experience it.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ORDER_PAID } from '#lib/billing/order-events.ts';
import { outboxKey } from '#lib/billing/outbox.ts';
import { FILE_DELETED } from '#lib/files/file-deletion.ts';
import { type IndexedFile, nameKey, tagKeys } from '#lib/files/file-index.ts';
import { trashKey } from '#lib/files/prefixes.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { OUTBOX_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import { serviceKeyOf } from './object-keys.ts';

export type FaultKind = 'throttling' | 'timeout' | 'generic';

export const FAULT_KINDS: readonly FaultKind[] = ['throttling', 'timeout', 'generic'];

/** The words an injected error carries; a response that shows them leaks internals. */
export const INJECTED_MARKER = 'injected-fault';

interface MiddlewareClient {
  middlewareStack: {
    add(middleware: unknown, options: { step: 'initialize'; name: string; priority?: 'high' }): void;
    remove(name: string): boolean;
  };
  config: { serviceId?: string };
}

export interface FaultOptions {
  /** The low-level command name, e.g. 'TransactWriteItemsCommand', 'PutObjectCommand'. */
  command: string;
  /** How many matching sends fail (default 1). */
  times?: number;
  error: FaultKind;
  /** Let this many matching sends through first (default 0). */
  after?: number;
  /** Only sends whose input this accepts count as matching (e.g. a key prefix). */
  when?: (input: Record<string, unknown>) => boolean;
}

export interface Fault {
  /** Matching sends seen so far. */
  readonly seen: number;
  /** Sends that were failed so far. */
  readonly failed: number;
  remove(): void;
}

let counter = 0;
const active = new Map<string, MiddlewareClient>();

/** An error shaped like the one the SDK raises for this kind of failure. */
export function faultError(kind: FaultKind, service: string): Error {
  if (kind === 'throttling') {
    const name =
      service === 'DynamoDB'
        ? 'ProvisionedThroughputExceededException'
        : service === 'S3'
          ? 'SlowDown'
          : 'ThrottlingException';
    return Object.assign(new Error(`${INJECTED_MARKER}: rate of requests exceeded (${name})`), {
      name,
      $fault: 'client',
      $retryable: { throttling: true },
      $metadata: { httpStatusCode: service === 'S3' ? 503 : 400, attempts: 3, totalRetryDelay: 150 },
    });
  }
  if (kind === 'timeout') {
    // What @smithy/node-http-handler throws when the socket times out.
    return Object.assign(new Error(`${INJECTED_MARKER}: the request socket timed out`), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      $metadata: { attempts: 3 },
    });
  }
  // An unclassified failure (a bug in a dependency): nothing says a retry helps, so it is the generic 500.
  return new TypeError(`${INJECTED_MARKER}: Cannot read properties of undefined (reading 'Body')`);
}

/** Makes the next matching sends of `client` fail with a realistic error. */
export function failNext(client: MiddlewareClient, options: FaultOptions): Fault {
  const name = `inject-fault-${++counter}`;
  const times = options.times ?? 1;
  const after = options.after ?? 0;
  const state = { seen: 0, failed: 0 };
  const service = client.config.serviceId ?? '';
  const middleware =
    (
      next: (args: { input: Record<string, unknown> }) => Promise<unknown>,
      context: { commandName?: string },
    ) =>
    async (args: { input: Record<string, unknown> }) => {
      if (context.commandName === options.command && (!options.when || options.when(args.input))) {
        state.seen += 1;
        if (state.seen > after && state.failed < times) {
          state.failed += 1;
          throw faultError(options.error, service);
        }
      }
      return next(args);
    };
  client.middlewareStack.add(middleware, { step: 'initialize', name, priority: 'high' });
  active.set(name, client);
  return {
    get seen() {
      return state.seen;
    },
    get failed() {
      return state.failed;
    },
    remove() {
      if (active.delete(name)) client.middlewareStack.remove(name);
    },
  };
}

/** Removes every fault still installed (afterEach). */
export function clearFaults(): void {
  for (const [name, client] of active) client.middlewareStack.remove(name);
  active.clear();
}

/** True when the input (document form) mentions this text anywhere, e.g. a key prefix. */
export const mentions =
  (text: string) =>
  (input: Record<string, unknown>): boolean =>
    JSON.stringify(input).includes(text);

// ---- post-state --------------------------------------------------------------------------------

export type TableItem = Record<string, unknown> & { pk: string; sk: string };

/** Every item of this test file's table. */
export async function scanTable(): Promise<TableItem[]> {
  const items: TableItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamoClient(config.aws).send(
      new ScanCommand({ TableName: config.table_name, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...((page.Items ?? []) as TableItem[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every object key of this test file's bucket (record keys and `incoming/`). */
export async function listBucket(): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3Client(config.aws).send(
      new ListObjectsV2Command({ Bucket: config.bucket_name, ContinuationToken: token }),
    );
    keys.push(...(page.Contents ?? []).map((object) => serviceKeyOf(object.Key ?? '')));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

const nowSeconds = () => Date.now() / 1000;
const live = (item: TableItem) => typeof item.expires_at !== 'number' || item.expires_at > nowSeconds();

/**
 * Everything in the table and bucket that breaks a storage rule: claims without their account, accounts
 * without their claims, records without their claim or object, claims without their record, objects
 * without a record, `incoming/` objects without an open or confirmed grant, confirmed grants pointing nowhere, paid
 * orders without `paid_at`, payment settings whose version item disagrees. Empty when all is well.
 */
export async function findOrphans(): Promise<string[]> {
  const [items, objects] = await Promise.all([scanTable(), listBucket()]);
  const byKey = new Map(items.map((item) => [`${item.pk}|${item.sk}`, item]));
  const get = (pk: string, sk: string) => byKey.get(`${pk}|${sk}`);
  const objectSet = new Set(objects);
  const problems: string[] = [];
  const recordKeys = new Set<string>();
  const openGrants = new Set<string>();
  // A confirmed grant's incoming object is left to the bucket's lifecycle rule for incoming/ (nothing reads
  // it once confirmed), so it is no orphan; one whose grant is gone (abandoned, refused) is.
  const confirmedGrants = new Set<string>();

  for (const item of items) {
    const { pk } = item;
    if (pk.startsWith('ident#')) {
      const account = get(`account#${item.account_id}`, 'account');
      const value = pk.slice('ident#'.length);
      const holds =
        account &&
        (String(account.username).toLowerCase() === value ||
          String(account.email ?? '').toLowerCase() === value);
      if (!holds) problems.push(`claim ${pk} without its account ${String(item.account_id)}`);
    } else if (pk.startsWith('account#')) {
      for (const value of [item.username, item.email]) {
        if (typeof value !== 'string') continue;
        const claim = get(`ident#${value.toLowerCase()}`, 'ident');
        if (claim?.account_id !== item.id) problems.push(`account ${item.id} without its claim ${value}`);
      }
    } else if (pk.startsWith('file#')) {
      // A file in the trash has its object under trash/, none at its key (docs/UPLOADS.md "Trash").
      const objectKey = item.trashed_at ? trashKey(String(item.key)) : String(item.key);
      recordKeys.add(objectKey);
      const claim = get(`filehash#${item.owner_id}#${item.hash}`, 'filehash');
      // A file in the trash gives up its claim (docs/UPLOADS.md "Trash") and keeps its purge mark instead.
      if (claim?.file_id !== item.id && !item.trashed_at)
        problems.push(`record ${item.id} without its hash claim`);
      if (item.trashed_at && !get(`purge#${item.id}`, 'purge'))
        problems.push(`trashed ${item.id} without its mark`);
      if (!objectSet.has(objectKey)) problems.push(`record ${item.id} without its object ${objectKey}`);
      // Its look-up items (lib/files/file-index.ts): one per tag, and its name's once marked.
      const file = item as unknown as IndexedFile;
      for (const key of [...tagKeys(file), ...(item.name_indexed === true ? [nameKey(file)] : [])]) {
        if (get(key.pk, key.sk)?.file_id !== item.id) problems.push(`record ${item.id} without ${key.pk}`);
      }
    } else if (pk.startsWith('filetag#') || pk.startsWith('filename#')) {
      if (!get(`file#${item.file_id}`, 'file')) problems.push(`look-up item ${pk} without its record`);
    } else if (pk.startsWith('filehash#')) {
      if (!get(`file#${item.file_id}`, 'file')) problems.push(`hash claim ${pk} without its record`);
    } else if (pk.startsWith('pending#')) {
      if (typeof item.confirmed_file_id === 'string') {
        if (!get(`file#${item.confirmed_file_id}`, 'file')) {
          problems.push(`confirmed grant ${item.key} points to a missing record`);
        }
        confirmedGrants.add(String(item.key));
      } else if (live(item)) {
        openGrants.add(String(item.key));
      }
    } else if (pk.startsWith('order#')) {
      if (item.status === 'paid' && typeof item.paid_at !== 'string')
        problems.push(`paid order ${pk} without paid_at`);
      // Settlement writes the order and its order.paid event (the outbox) in one transaction.
      if (item.status === 'paid' && !get(outboxKey(String(item.id)).pk, ORDER_PAID))
        problems.push(`paid order ${pk} without its order.paid event in the outbox`);
    } else if (pk.startsWith(OUTBOX_KEY_PREFIX) && item.sk === FILE_DELETED) {
      // An owner's delete writes its file.deleted event in its own transaction (docs/WEBHOOKS.md).
      const file = item.file as { id: string };
      if (get(`file#${file.id}`, 'file')) problems.push(`file.deleted event ${pk} of a file still stored`);
    } else if (pk.startsWith(OUTBOX_KEY_PREFIX)) {
      if (get(`order#${item.order_id}`, 'order')?.status !== 'paid')
        problems.push(`order.paid event ${pk} of an order that is not paid`);
    }
  }
  const settings = get('settings#payment', 'settings');
  const version = get('settings#payment', 'version');
  if ((settings || version) && settings?.version !== version?.version) {
    problems.push(
      `payment settings v${String(settings?.version)} but version item v${String(version?.version)}`,
    );
  }
  for (const key of objects) {
    if (key.startsWith('incoming/')) {
      const grant = key.slice('incoming/'.length);
      if (!openGrants.has(grant) && !confirmedGrants.has(grant))
        problems.push(`incoming object ${key} without an open or confirmed grant`);
    } else if (!recordKeys.has(key)) {
      problems.push(`object ${key} without a record`);
    }
  }
  return problems;
}
