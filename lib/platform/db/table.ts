// Table access shared by every repository: expiry-aware reads and conditional writes that fail with
// typed errors instead of SDK exceptions, so uniqueness, single use and settlement never read-then-write.
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { AppError, errors } from '#lib/core/errors.ts';
import { type IndexName, TABLE } from './keys.ts';

export type Item = Record<string, unknown>;
export type Key = { pk: string; sk: string };
export type Clock = () => Date;
type SdkTransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** One item of a transaction; the table name is added by `Table.transact`. */
export type TransactItem = {
  [Kind in keyof SdkTransactItem]?: Omit<NonNullable<SdkTransactItem[Kind]>, 'TableName'>;
};

/**
 * A conditional write (or one item of a transaction) found the table not as it required. Uncaught, it
 * answers 409; services catch it to say which rule was hit. `failedItems` holds the indexes of the
 * transaction items whose condition failed.
 */
export class ConditionFailedError extends AppError {
  readonly failedItems: number[];
  constructor(failedItems: number[] = [], cause?: unknown) {
    super('conflict', 'The resource was changed by another request', { cause });
    this.name = 'ConditionFailedError';
    this.failedItems = failedItems;
  }
}

// Services state what a lost conditional write means with these in a `.catch`, instead of a try/catch each.
/** For `.catch`: a lost conditional write throws `refusal(error)` instead; any other error passes unchanged. */
export function conditionFailedAs(refusal: (error: ConditionFailedError) => Error) {
  return (error: unknown): never => {
    throw error instanceof ConditionFailedError ? refusal(error) : error;
  };
}

/** For `.catch`: a lost conditional write answers `value` instead; any other error passes unchanged. */
export function conditionFailedReturns<T>(value: T) {
  return (error: unknown): T => {
    if (error instanceof ConditionFailedError) return value;
    throw error;
  };
}

/**
 * An update of an existing item: `updated_at` and every field given a value (undefined leaves it as it is);
 * a field in `keepStored` is written only where the item has none yet.
 */
export function setFields(fields: object, updatedAt: string, keepStored: readonly string[] = []) {
  const names: Record<string, string> = { '#updated': 'updated_at' };
  const values: Record<string, unknown> = { ':updated': updatedAt };
  const sets = ['#updated = :updated'];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    const assigned = keepStored.includes(field) ? `if_not_exists(#${field}, :${field})` : `:${field}`;
    sets.push(`#${field} = ${assigned}`);
  }
  return {
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** Epoch seconds, the unit of the TTL attribute. */
export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

export function isExpired(item: Item, now: Date): boolean {
  const expiresAt = item[TABLE.ttlAttribute];
  return typeof expiresAt === 'number' && expiresAt <= now.getTime() / 1000;
}

/** In `indexNames`: the index is not built yet, and a query of it finds nothing. */
export const NOT_BUILT = 'none';

export class Table {
  /**
   * `indexNames`: the index a query of each named index reads instead (the `table_indexes` setting), while
   * a deployed table still has its older indexes (docs/DEPLOYMENT.md); absent, each reads its own.
   */
  constructor(
    readonly client: DynamoDBDocumentClient,
    readonly name: string,
    readonly clock: Clock = () => new Date(),
    readonly indexNames: Partial<Record<IndexName, string>> = {},
  ) {}

  /**
   * The item, or undefined when absent or past its `expires_at`. `includeExpired` answers an expired item
   * as stored, for callers that must clean up after it rather than treat it as gone.
   */
  async get<T extends Item = Item>(
    key: Key,
    options: { consistent?: boolean; includeExpired?: boolean } = {},
  ): Promise<T | undefined> {
    const { Item: item } = await this.client.send(
      new GetCommand({ TableName: this.name, Key: key, ConsistentRead: options.consistent ?? true }),
    );
    if (!item || (!options.includeExpired && isExpired(item, this.clock()))) return undefined;
    return item as T;
  }

  /**
   * Several items in one round trip (strongly consistent), in the order of `keys`; absent or expired:
   * undefined (`includeExpired` answers expired items as stored, as `get` does).
   */
  async getMany<T extends Item = Item>(
    keys: Key[],
    options: { includeExpired?: boolean } = {},
  ): Promise<Array<T | undefined>> {
    // BatchGetItem refuses an empty request (a ValidationException): nothing asked, nothing read.
    if (keys.length === 0) return [];
    const { Responses, UnprocessedKeys } = await this.client.send(
      new BatchGetCommand({ RequestItems: { [this.name]: { Keys: keys, ConsistentRead: true } } }),
    );
    let found = Responses?.[this.name] ?? [];
    // DynamoDB may defer keys under load; ask again for those only.
    const deferred = UnprocessedKeys?.[this.name]?.Keys as Key[] | undefined;
    if (deferred && deferred.length > 0) {
      found = [...found, ...((await this.getMany<T>(deferred, options)).filter(Boolean) as Item[])];
    }
    const now = this.clock();
    return keys.map((key) => {
      const item = found.find((candidate) => candidate.pk === key.pk && candidate.sk === key.sk);
      return item && (options.includeExpired || !isExpired(item, now)) ? (item as T) : undefined;
    });
  }

  /** Unconditional puts and deletes in one BatchWriteItem (at most 25); what is left unprocessed, again. */
  async writeBatch(puts: Array<Item & Key>, deletes: Key[] = []): Promise<void> {
    let requests: Array<Record<string, unknown>> = [
      ...puts.map((item) => ({ PutRequest: { Item: item } })),
      ...deletes.map((key) => ({ DeleteRequest: { Key: key } })),
    ];
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 4) throw new Error('DynamoDB left batch writes unprocessed');
        await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      }
      const { UnprocessedItems } = await this.client.send(
        new BatchWriteCommand({ RequestItems: { [this.name]: requests as never } }),
      );
      requests = (UnprocessedItems?.[this.name] ?? []) as Array<Record<string, unknown>>;
    }
  }

  /** Writes an item that must not exist yet (an expired leftover counts as absent). */
  async putNew(item: Item & Key): Promise<void> {
    await this.put(item, {
      ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',
      ExpressionAttributeNames: { '#expires': TABLE.ttlAttribute },
      ExpressionAttributeValues: { ':now': epochSeconds(this.clock()) },
    });
  }

  async put(
    item: Item & Key,
    condition: Pick<
      PutCommandInput,
      'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    > = {},
  ): Promise<void> {
    await this.conditional(() =>
      this.client.send(new PutCommand({ TableName: this.name, Item: item, ...condition })),
    );
  }

  /** A conditional update; returns the item as it is after the update. */
  async update<T extends Item = Item>(
    key: Key,
    update: Omit<UpdateCommandInput, 'TableName' | 'Key' | 'ReturnValues'>,
  ): Promise<T> {
    const { Attributes } = await this.conditional(() =>
      this.client.send(
        new UpdateCommand({ TableName: this.name, Key: key, ReturnValues: 'ALL_NEW', ...update }),
      ),
    );
    return Attributes as T;
  }

  async delete(key: Key, condition: Omit<DeleteCommandInput, 'TableName' | 'Key'> = {}): Promise<void> {
    await this.conditional(() =>
      this.client.send(new DeleteCommand({ TableName: this.name, Key: key, ...condition })),
    );
  }

  /**
   * Deletes the item and answers it as it was: a single-use item taken once (a concurrent taker's
   * condition fails). `condition` must require the item to exist.
   */
  async take<T extends Item = Item>(
    key: Key,
    condition: Omit<DeleteCommandInput, 'TableName' | 'Key' | 'ReturnValues'>,
  ): Promise<T> {
    const { Attributes } = await this.conditional(() =>
      this.client.send(
        new DeleteCommand({ TableName: this.name, Key: key, ReturnValues: 'ALL_OLD', ...condition }),
      ),
    );
    return Attributes as T;
  }

  /** One conditional write: a failed condition becomes ConditionFailedError. */
  private async conditional<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if ((error as { name?: string })?.name === 'ConditionalCheckFailedException')
        throw new ConditionFailedError([0], error);
      throw error;
    }
  }

  /** All-or-nothing writes; a failed condition names the items that caused it. */
  async transact(items: TransactItem[]): Promise<void> {
    const withTable = items.map((entry) => {
      const out: SdkTransactItem = {};
      if (entry.Put) out.Put = { ...entry.Put, TableName: this.name };
      if (entry.Update) out.Update = { ...entry.Update, TableName: this.name };
      if (entry.Delete) out.Delete = { ...entry.Delete, TableName: this.name };
      if (entry.ConditionCheck) out.ConditionCheck = { ...entry.ConditionCheck, TableName: this.name };
      return out;
    });
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: withTable }));
    } catch (error) {
      const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons;
      if ((error as { name?: string }).name === 'TransactionCanceledException' && reasons) {
        const failed = reasons.flatMap((reason, index) =>
          reason.Code === 'ConditionalCheckFailed' ? [index] : [],
        );
        // A conflict between two concurrent transactions is the same outcome for the caller: someone else won.
        const conflicted = reasons.some((reason) => reason.Code === 'TransactionConflict');
        if (failed.length > 0 || conflicted) throw new ConditionFailedError(failed, error);
      }
      throw error;
    }
  }

  /** One page of a query, expired items left out. */
  async query<T extends Item = Item>(
    input: Omit<QueryCommandInput, 'TableName'>,
  ): Promise<{ items: T[]; lastKey?: Record<string, unknown> }> {
    const index = input.IndexName && this.indexNames[input.IndexName as IndexName];
    // An index not built yet while a deployed table moves to the current ones (docs/DEPLOYMENT.md).
    if (index === NOT_BUILT) return { items: [] };
    const { Items, LastEvaluatedKey } = await this.client.send(
      new QueryCommand({ TableName: this.name, ...input, ...(index ? { IndexName: index } : {}) }),
    );
    const now = this.clock();
    return {
      items: (Items ?? []).filter((item) => !isExpired(item, now)) as T[],
      ...(LastEvaluatedKey ? { lastKey: LastEvaluatedKey } : {}),
    };
  }

  /** Each page of a strongly consistent scan, expired items included: for scripts; the service never scans. */
  async *scan<T extends Item = Item>(
    input: Omit<ScanCommandInput, 'TableName' | 'ConsistentRead' | 'ExclusiveStartKey'>,
  ): AsyncGenerator<T[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({ TableName: this.name, ConsistentRead: true, ExclusiveStartKey: start, ...input }),
      );
      yield (page.Items ?? []) as T[];
      start = page.LastEvaluatedKey;
    } while (start);
  }

  /** How many items a query matches, every page read (Select COUNT: keys only, nothing returned). */
  async count(input: Omit<QueryCommandInput, 'TableName' | 'Select' | 'ExclusiveStartKey'>): Promise<number> {
    const index = input.IndexName && this.indexNames[input.IndexName as IndexName];
    if (index === NOT_BUILT) return 0;
    let total = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.client.send(
        new QueryCommand({
          TableName: this.name,
          ...input,
          ...(index ? { IndexName: index } : {}),
          Select: 'COUNT',
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      total += output.Count ?? 0;
      startKey = output.LastEvaluatedKey;
    } while (startKey);
    return total;
  }
}

/** Opaque pagination cursors: the last evaluated key, base64url JSON. */
export function encodeCursor(lastKey: Record<string, unknown> | undefined): string | null {
  return lastKey ? Buffer.from(JSON.stringify(lastKey), 'utf8').toString('base64url') : null;
}

/**
 * What one listing's cursor holds: every key attribute of the table and of the index it reads, each an
 * exact value (the listing's partition, a fixed sort key) or a pattern the value matches.
 */
export type CursorShape = Readonly<Record<string, string | RegExp>>;

/** A key value with no constraint beyond every key value's (a cursor's sort key position). */
export const ANY_KEY_VALUE = /^/;

/**
 * DynamoDB refuses a key value over 1,024 bytes (a sort key's limit, the lower one) or an empty one, and
 * a string that is not well-formed UTF-16 cannot become UTF-8: each would be its ValidationException, a
 * 500, if it reached a query.
 */
export function isKeyValue(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    Buffer.byteLength(value, 'utf8') <= 1024 &&
    Buffer.from(value, 'utf8').toString('utf8') === value
  );
}

/** The 400 of every cursor that is not one this listing gave out. */
export const invalidCursor = () => errors.badRequest('query.cursor: is not a valid cursor');

/**
 * The start key a cursor of this listing names, or a 400: a cursor is the listing's own last key and
 * nothing else, so a forged one (other attributes, another listing's, another account's partition, a
 * value DynamoDB would refuse) never reaches DynamoDB, whose ValidationException would be a 500.
 */
export function decodeCursor(
  cursor: string | undefined,
  shape: CursorShape,
): Record<string, string> | undefined {
  if (!cursor) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidCursor();
  const key = value as Record<string, unknown>;
  const names = Object.keys(key);
  const expected = Object.keys(shape);
  if (names.length !== expected.length || !expected.every((name) => Object.hasOwn(key, name))) {
    throw invalidCursor();
  }
  for (const name of expected) {
    const item = key[name];
    const rule = shape[name]!;
    if (!isKeyValue(item) || (typeof rule === 'string' ? item !== rule : !rule.test(item))) {
      throw invalidCursor();
    }
  }
  return key as Record<string, string>;
}
