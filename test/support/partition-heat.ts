// Partition-key heat: every DynamoDB request's table and index partitions, with size-based capacity units,
// attributed to the path (and caller) whose request made it. Shared by the load-mix test (no partition may
// take more than a tenth of the writes) and the bench (the hottest key's WCU/s and RCU/s at the target load).
// DynamoDB Local does not report consumed capacity reliably, so units are estimated from the items seen:
// 1 WCU per KB written (2 in a transaction), 1 RCU per 4 KB read strongly consistent, 0.5 eventually.
// Approximations (docs/PERFORMANCE.md "Partition heat"): the index partitions an item LEAVES on an update or
// a delete are those of the last image of that item this recorder saw (a write, or a read that returned it);
// an item written before the recorder was installed and never read is charged to its new partitions only.
import { AsyncLocalStorage } from 'node:async_hooks';
import { TABLE } from '#lib/platform/db/keys.ts';
import type { StackClient } from './aws-waits.ts';

/** Where a partition lives: the table or one of its indexes. */
export type Space = 'table' | (typeof TABLE.indexes)[number]['name'];

export interface KeyHeat {
  space: Space;
  key: string;
  /** Item writes that landed in this partition (a transaction's item counts once). */
  writes: number;
  wcu: number;
  reads: number;
  rcu: number;
  /** Units by path. */
  byPath: Record<string, { wcu: number; rcu: number }>;
  /** The callers whose requests touched it. */
  callers: Set<string>;
}

interface Context {
  path: string;
  caller: string;
}

type Item = Record<string, unknown>;
type Input = Record<string, unknown>;

const context = new AsyncLocalStorage<Context>();
/** The caller of a worker's runs (trackBatch). */
const WORKER = 'worker';
const KB = 1024;

/** DynamoDB's item size, approximately: attribute names plus values (numbers about half their digits). */
export function itemSize(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (value instanceof Set) return [...value].reduce((sum: number, entry) => sum + valueSize(entry), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, entry) => sum + 1 + valueSize(entry), 0);
  if (typeof value === 'object') return 3 + itemSize(value as Item) + Object.keys(value).length;
  return 1;
}

/** The index partitions an item lands in (an index holds an item only when it has both the index's keys). */
function indexPartitions(item: Item): Array<{ space: Space; key: string; size: number }> {
  return TABLE.indexes.flatMap((index) => {
    const pk = item[index.partitionKey];
    if (typeof pk !== 'string' || item[index.sortKey] === undefined) return [];
    const size = itemSize(
      Object.fromEntries(
        Object.entries(item).filter(
          ([name]) =>
            ['pk', 'sk', index.partitionKey, index.sortKey].includes(name) ||
            (index.projected as readonly string[]).includes(name),
        ),
      ),
    );
    return [{ space: index.name as Space, key: pk, size }];
  });
}

const writeUnits = (size: number, transactional: boolean) =>
  Math.max(1, Math.ceil(size / KB)) * (transactional ? 2 : 1);
const readUnits = (size: number, consistent: boolean) =>
  Math.max(1, Math.ceil(size / (4 * KB))) * (consistent ? 1 : 0.5);

/**
 * What an update expression assigns (`SET a = :v`, `#a = :v`; `if_not_exists` and copies are not index
 * keys here) and the attributes it removes.
 */
function parseUpdate(input: Input): { set: Item; removed: string[] } {
  const expression = String(input.UpdateExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  const nameOf = (token: string) => names[token] ?? token;
  const set: Item = {};
  for (const match of expression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g))
    set[nameOf(match[1]!)] = values[match[2]!];
  const removeClause = /\bREMOVE\b([\s\S]*?)(?=\b(?:SET|ADD|DELETE)\b|$)/i.exec(expression)?.[1] ?? '';
  const removed = removeClause
    .split(',')
    .map((token) => nameOf(token.trim()))
    .filter(Boolean);
  return { set, removed };
}

/** The partition key value a query's key condition names (`#pk = :v` or `gsi1pk = :v`). */
function queriedPartition(input: Input): { space: Space; key: string } | undefined {
  const indexName = input.IndexName as string | undefined;
  const index = TABLE.indexes.find((entry) => entry.name === indexName);
  const attribute = index ? index.partitionKey : TABLE.partitionKey;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const match of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    if ((names[match[1]!] ?? match[1]) === attribute) {
      return { space: (index?.name ?? 'table') as Space, key: String(values[match[2]!]) };
    }
  }
  return undefined;
}

const itemId = (key: Item) => `${String(key.pk)}\u0000${String(key.sk)}`;

/** The DynamoDB document client's requests, by partition, while installed. */
export class HeatRecorder {
  private readonly heat = new Map<string, KeyHeat>();
  /** The last image of each item seen (its index keys decide which partitions a later write leaves). */
  private readonly images = new Map<string, Item>();
  /** Requests per path (what units per request divide by). */
  readonly requests: Record<string, number> = {};
  private installed: { client: StackClient; name: string } | undefined;

  /** Runs one request of `path` by `caller`: its DynamoDB calls are charged to both. */
  track<T>(path: string, caller: string, run: () => Promise<T>): Promise<T> {
    this.requests[path] = (this.requests[path] ?? 0) + 1;
    return context.run({ path, caller }, run);
  }

  /**
   * Runs one worker run of `path` that took `items` items (reminders mailed, takedowns denied): charged as
   * `items` requests, so its units per request are per item, as its target rate counts them.
   */
  async trackBatch<T>(path: string, run: () => Promise<T>, items: (result: T) => number) {
    const result = await context.run({ path, caller: WORKER }, run);
    this.requests[path] = (this.requests[path] ?? 0) + items(result);
    return result;
  }

  /** On the document client's stack (`initialize`: the input and output are plain objects there). */
  install(client: StackClient): this {
    const name = 'partitionHeatRecorder';
    client.middlewareStack.add(
      (next: (args: { input: Input }) => Promise<{ output: Input }>, ctx: { commandName?: string }) =>
        async (args: { input: Input }) => {
          const result = await next(args);
          this.record(String(ctx.commandName ?? '').replace(/Command$/, ''), args.input, result.output ?? {});
          return result;
        },
      { step: 'initialize', name, priority: 'low' },
    );
    this.installed = { client, name };
    return this;
  }

  uninstall(): void {
    if (this.installed) this.installed.client.middlewareStack.remove(this.installed.name);
    this.installed = undefined;
  }

  keys(): KeyHeat[] {
    return [...this.heat.values()];
  }

  /** Each partition's share of the item writes of its space (the table, or one index), largest first. */
  writeShares(): Array<KeyHeat & { share: number }> {
    const totals = new Map<Space, number>();
    for (const entry of this.heat.values())
      totals.set(entry.space, (totals.get(entry.space) ?? 0) + entry.writes);
    return this.keys()
      .filter((entry) => entry.writes > 0)
      .map((entry) => ({ ...entry, share: entry.writes / (totals.get(entry.space) ?? 1) }))
      .sort((a, b) => b.share - a.share);
  }

  private charge(space: Space, key: string, kind: 'write' | 'read', units: number): void {
    const at = context.getStore() ?? { path: 'unattributed', caller: 'unattributed' };
    const id = `${space} ${key}`;
    let entry = this.heat.get(id);
    if (!entry) {
      entry = { space, key, writes: 0, wcu: 0, reads: 0, rcu: 0, byPath: {}, callers: new Set() };
      this.heat.set(id, entry);
    }
    const path = entry.byPath[at.path] ?? { wcu: 0, rcu: 0 };
    entry.byPath[at.path] = path;
    if (kind === 'write') {
      entry.writes += 1;
      entry.wcu += units;
      path.wcu += units;
    } else {
      entry.reads += 1;
      entry.rcu += units;
      path.rcu += units;
    }
    // A worker's run reaches each entity's items for their owner: it is not another caller of them.
    if (at.caller !== WORKER) entry.callers.add(at.caller);
  }

  /** One item written: its table partition, every index partition it lands in, and those it leaves. */
  private written(
    key: Item,
    before: Item | undefined,
    after: Item | undefined,
    transactional: boolean,
  ): void {
    const size = after ? itemSize(after) : before ? itemSize(before) : 1;
    this.charge('table', String(key.pk), 'write', writeUnits(size, transactional));
    const landed = after ? indexPartitions(after) : [];
    for (const partition of landed)
      this.charge(partition.space, partition.key, 'write', writeUnits(partition.size, transactional));
    for (const left of before ? indexPartitions(before) : []) {
      if (!landed.some((entry) => entry.space === left.space && entry.key === left.key)) {
        this.charge(left.space, left.key, 'write', writeUnits(left.size, transactional));
      }
    }
    if (after) this.images.set(itemId(key), after);
    else this.images.delete(itemId(key));
  }

  private put(item: Item, transactional: boolean): void {
    this.written(item, this.images.get(itemId(item)), item, transactional);
  }

  private update(input: Input, returned: Item | undefined, transactional: boolean): void {
    const key = input.Key as Item;
    const before = this.images.get(itemId(key));
    let after: Item;
    if (returned && input.ReturnValues === 'ALL_NEW') after = returned;
    else {
      const { set, removed } = parseUpdate(input);
      after = { ...(before ?? key), ...set };
      for (const name of removed) delete after[name];
    }
    this.written(key, before, after, transactional);
  }

  private deleted(key: Item, transactional: boolean): void {
    this.written(key, this.images.get(itemId(key)), undefined, transactional);
  }

  private seen(item: Item | undefined): void {
    if (item && typeof item.pk === 'string' && typeof item.sk === 'string')
      this.images.set(itemId(item), item);
  }

  private record(operation: string, input: Input, output: Input): void {
    switch (operation) {
      case 'PutItem':
        this.put(input.Item as Item, false);
        return;
      case 'UpdateItem':
        this.update(input, output.Attributes as Item | undefined, false);
        return;
      case 'DeleteItem':
        this.deleted(input.Key as Item, false);
        return;
      case 'BatchWriteItem':
        for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, Input[]>)) {
          for (const request of requests) {
            const put = request.PutRequest as { Item: Item } | undefined;
            const del = request.DeleteRequest as { Key: Item } | undefined;
            if (put) this.put(put.Item, false);
            if (del) this.deleted(del.Key, false);
          }
        }
        return;
      case 'TransactWriteItems':
        for (const entry of (input.TransactItems ?? []) as Input[]) {
          if (entry.Put) this.put((entry.Put as Input).Item as Item, true);
          if (entry.Update) this.update(entry.Update as Input, undefined, true);
          if (entry.Delete) this.deleted((entry.Delete as Input).Key as Item, true);
          // A condition check is billed as a transactional write of its item's partition.
          if (entry.ConditionCheck) {
            const key = (entry.ConditionCheck as Input).Key as Item;
            this.charge('table', String(key.pk), 'write', 2);
          }
        }
        return;
      case 'GetItem': {
        const key = input.Key as Item;
        const item = output.Item as Item | undefined;
        this.seen(item);
        this.charge(
          'table',
          String(key.pk),
          'read',
          readUnits(item ? itemSize(item) : 1, input.ConsistentRead === true),
        );
        return;
      }
      case 'BatchGetItem':
        for (const [table, request] of Object.entries((input.RequestItems ?? {}) as Record<string, Input>)) {
          const found = ((output.Responses as Record<string, Item[]> | undefined)?.[table] ?? []) as Item[];
          for (const key of (request.Keys ?? []) as Item[]) {
            const item = found.find((entry) => entry.pk === key.pk && entry.sk === key.sk);
            this.seen(item);
            this.charge(
              'table',
              String(key.pk),
              'read',
              readUnits(item ? itemSize(item) : 1, request.ConsistentRead === true),
            );
          }
        }
        return;
      case 'Query': {
        const partition = queriedPartition(input);
        const items = (output.Items ?? []) as Item[];
        if (!input.IndexName) for (const item of items) this.seen(item);
        const size = items.reduce((sum, item) => sum + itemSize(item), 0);
        if (partition)
          this.charge(partition.space, partition.key, 'read', readUnits(size, input.ConsistentRead === true));
        return;
      }
      default:
        return;
    }
  }
}
