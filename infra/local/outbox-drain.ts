// The local stand-in for the outbox-drain function's event source mapping (docs/DESIGN.md 14): reads the
// table's stream on DynamoDB Local, keeps what the stack's filter keeps (INSERT of an `OUTBOX#` key),
// and calls the same drain handler with the records as Lambda shapes them, in small batches, retrying
// from the first failed record as Lambda does. After the retries it gives the batch up, as Lambda hands it
// to the dead-letter queue: the events stay pending in the table for a re-drive, which also runs once
// each time the drain starts (events written while nothing drained, or whose stream records are gone).
// Dev and test only: @aws-sdk/client-dynamodb-streams is a devDependency, never in a Lambda bundle.
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type GetShardIteratorCommandInput,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { PUT_EVENTS_MAX_ENTRIES } from '#lib/billing/order-events.ts';
import { localCredentials } from '#lib/platform/aws/local.ts';
import type { AwsSettings } from '#lib/platform/config/schema.ts';
import { FILE_KEY_PREFIX, OUTBOX_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import { log } from '#lib/platform/log.ts';

/** Calls the drain with one event (a stream batch, or the re-drive request); resolves to its result. */
export type DrainInvoke = (event: unknown) => Promise<unknown>;

/** The stack's filter on the event source mapping: new outbox items and new file records only. */
export function isOutboxInsert(record: DynamoDBRecord): boolean {
  const pk = record.dynamodb?.Keys?.pk?.S ?? '';
  return (
    record.eventName === 'INSERT' && (pk.startsWith(OUTBOX_KEY_PREFIX) || pk.startsWith(FILE_KEY_PREFIX))
  );
}

export interface LocalStreamPollerOptions {
  aws: Pick<AwsSettings, 'region' | 'dynamodb_endpoint'>;
  tableName: string;
  invoke: DrainInvoke;
  /** The mapping's filter (default: the outbox drain's, isOutboxInsert). */
  accepts?: (record: DynamoDBRecord) => boolean;
  /** Records per invocation (default: the drain's, one PutEvents call's worth). */
  batchSize?: number;
  /** Where a new mapping starts: the oldest record kept (the drain's) or the newest (the moderation worker's). */
  startAt?: 'oldest' | 'latest';
  /** The function's name in log lines (default: the outbox drain). */
  name?: string;
  /** Retries of a failing batch before it is given up (the stack's mapping uses 10). */
  retryAttempts?: number;
  /** Pause before retry number `attempt` (0-based). */
  retryDelayMs?: (attempt: number) => number;
}

export interface PollSummary {
  /** Records handed to the function (each try counted once). */
  records: number;
  /** Invocations that reported a failure (or failed as a whole). */
  failedInvocations: number;
  /** Records given up after the last retry (they stay pending in the table). */
  givenUp: number;
}

/** Records per invocation, as the stack's mapping sends them: one PutEvents call's worth. */
const BATCH_SIZE = PUT_EVENTS_MAX_ENTRIES;

interface ShardState {
  iterator?: string;
  lastSequence?: string;
  done: boolean;
  /** Read from its newest record on (a mapping that starts at the latest, for the shards open at its start). */
  latest?: boolean;
}

/** Polls one table's stream on DynamoDB Local, as Lambda's event source mapping polls it in AWS. */
export class LocalStreamPoller {
  private readonly dynamo: DynamoDBClient;
  private readonly streams: DynamoDBStreamsClient;
  private readonly retryAttempts: number;
  private readonly retryDelayMs: (attempt: number) => number;
  private streamArn: string | undefined;
  private shards = new Map<string, ShardState>();
  private startsAtLatest: boolean;
  /** One poll at a time: a loop tick and a caller's pollOnce never read the same shard side by side. */
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LocalStreamPollerOptions) {
    const { aws } = options;
    // The same region and credentials as the table's client: DynamoDB Local keeps tables per both.
    const client = {
      region: aws.region,
      ...(aws.dynamodb_endpoint
        ? { endpoint: aws.dynamodb_endpoint, credentials: localCredentials('dynamodb') }
        : {}),
    };
    this.dynamo = new DynamoDBClient(client);
    this.streams = new DynamoDBStreamsClient(client);
    this.retryAttempts = options.retryAttempts ?? 10;
    this.startsAtLatest = options.startAt === 'latest';
    this.retryDelayMs = options.retryDelayMs ?? ((attempt) => Math.min(100 * 2 ** attempt, 5_000));
  }

  /** Reads every shard up to its end and delivers what it found; resolves once caught up. */
  pollOnce(): Promise<PollSummary> {
    const next = this.running.then(
      () => this.poll(),
      () => this.poll(),
    );
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Resolves when no poll is under way. */
  async idle(): Promise<void> {
    await this.running;
  }

  close(): void {
    this.dynamo.destroy();
    this.streams.destroy();
  }

  private async poll(): Promise<PollSummary> {
    const summary: PollSummary = { records: 0, failedInvocations: 0, givenUp: 0 };
    const streamArn = await this.currentStream();
    const shards = await this.listShards(streamArn);
    const listed = new Set(shards.map((shard) => shard.ShardId));
    if (this.startsAtLatest) {
      // Closed shards hold only what came before the start; open ones are read from their end on.
      for (const shard of shards) {
        const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        this.shards.set(shard.ShardId!, closed ? { done: true } : { done: false, latest: true });
      }
      this.startsAtLatest = false;
    }
    // Parents before children, as Lambda reads them; a pass that moves nothing ends the poll.
    for (let moved = true; moved; ) {
      moved = false;
      for (const shard of shards) {
        const id = shard.ShardId!;
        const state = this.shards.get(id) ?? { done: false };
        this.shards.set(id, state);
        const parent = shard.ParentShardId;
        if (state.done || (parent && listed.has(parent) && !this.shards.get(parent)?.done)) continue;
        await this.readShard(streamArn, id, state, summary);
        if (state.done) moved = true;
      }
    }
    return summary;
  }

  private async currentStream(): Promise<string> {
    const { Table: table } = await this.dynamo.send(
      new DescribeTableCommand({ TableName: this.options.tableName }),
    );
    const arn = table?.LatestStreamArn;
    if (!arn || !table?.StreamSpecification?.StreamEnabled) {
      throw new Error(
        `Table ${this.options.tableName} has no stream (infra/local/provision.ts ensureTable turns it on)`,
      );
    }
    if (arn !== this.streamArn) {
      // A new stream (the table was re-made or its stream turned on again): read it from its start.
      this.streamArn = arn;
      this.shards = new Map();
    }
    return arn;
  }

  private async listShards(streamArn: string): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription: description } = await this.streams.send(
        new DescribeStreamCommand({
          StreamArn: streamArn,
          ...(start ? { ExclusiveStartShardId: start } : {}),
        }),
      );
      shards.push(...(description?.Shards ?? []));
      start = description?.LastEvaluatedShardId;
    } while (start);
    return shards;
  }

  /** Reads one shard until it has nothing more (open) or ends (closed: `done`). */
  private async readShard(streamArn: string, shardId: string, state: ShardState, summary: PollSummary) {
    for (;;) {
      state.iterator ??= await this.iteratorFor(streamArn, shardId, state);
      let answer: Awaited<ReturnType<typeof this.getRecords>>;
      try {
        answer = await this.getRecords(state.iterator);
      } catch (error) {
        const name = (error as { name?: string }).name;
        if (name !== 'ExpiredIteratorException' && name !== 'TrimmedDataAccessException') throw error;
        // Asleep too long (an iterator lives 15 minutes): start again after the last record handled.
        state.iterator = undefined;
        if (name === 'TrimmedDataAccessException') state.lastSequence = undefined;
        continue;
      }
      const records = answer.Records ?? [];
      const accepts = this.options.accepts ?? isOutboxInsert;
      const batchSize = this.options.batchSize ?? BATCH_SIZE;
      const wanted = records.map((record) => lambdaRecord(record, streamArn)).filter(accepts);
      for (let from = 0; from < wanted.length; from += batchSize) {
        await this.deliverBatch(wanted.slice(from, from + batchSize), summary);
      }
      const last = records.at(-1)?.dynamodb?.SequenceNumber;
      if (last) state.lastSequence = last;
      if (!answer.NextShardIterator) {
        state.done = true;
        state.iterator = undefined;
        return;
      }
      state.iterator = answer.NextShardIterator;
      if (records.length === 0) return;
    }
  }

  private getRecords(iterator: string) {
    return this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
  }

  private async iteratorFor(streamArn: string, shardId: string, state: ShardState): Promise<string> {
    const input: GetShardIteratorCommandInput = state.lastSequence
      ? {
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
          SequenceNumber: state.lastSequence,
        }
      : {
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: state.latest ? 'LATEST' : 'TRIM_HORIZON',
        };
    state.latest = false;
    const { ShardIterator: iterator } = await this.streams.send(new GetShardIteratorCommand(input));
    if (!iterator) throw new Error(`No iterator for shard ${shardId}`);
    return iterator;
  }

  /** One batch to the function, retried from its first failed record, then given up. */
  private async deliverBatch(batch: DynamoDBRecord[], summary: PollSummary): Promise<void> {
    let records = batch;
    for (let attempt = 0; ; attempt += 1) {
      summary.records += records.length;
      const failedFrom = await this.invokeOnce(records);
      if (failedFrom < 0) return;
      summary.failedInvocations += 1;
      records = records.slice(failedFrom);
      if (attempt >= this.retryAttempts) {
        summary.givenUp += records.length;
        log.error('stream records given up after their retries', {
          function: this.options.name ?? 'outbox-drain',
          records: records.length,
          first_sequence_number: records[0]?.dynamodb?.SequenceNumber,
        });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.retryDelayMs(attempt)));
    }
  }

  /** Index of the first record to retry, or -1 when the whole batch succeeded. */
  private async invokeOnce(records: DynamoDBRecord[]): Promise<number> {
    let result: unknown;
    try {
      result = await this.options.invoke({ Records: records } satisfies DynamoDBStreamEvent);
    } catch (error) {
      log.warn('a stream reader failed a whole batch', {
        function: this.options.name ?? 'outbox-drain',
        error,
      });
      return 0;
    }
    // Our drain always answers a batch response; anything else is a failed invocation (the local function
    // host answers a function that threw with API Gateway's bare 500).
    const failures = (result as { batchItemFailures?: unknown })?.batchItemFailures;
    if (!Array.isArray(failures)) return 0;
    if (failures.length === 0) return -1;
    const failed = new Set(
      failures.map((failure) => (failure as { itemIdentifier?: unknown })?.itemIdentifier),
    );
    const first = records.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber));
    // An identifier that names no record of the batch: Lambda retries the whole batch.
    return first < 0 ? 0 : first;
  }
}

/** A stream record as Lambda hands it to a function: epoch seconds, base64 binaries, the stream's ARN. */
export function lambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const { dynamodb, ...rest } = record;
  const created = dynamodb?.ApproximateCreationDateTime;
  const plain = JSON.parse(
    JSON.stringify({ ...rest, eventSourceARN: streamArn, dynamodb }, (_key, value: unknown) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value,
    ),
  ) as DynamoDBRecord;
  if (plain.dynamodb && created)
    plain.dynamodb.ApproximateCreationDateTime = Math.floor(created.getTime() / 1000);
  return plain;
}

export interface LocalOutboxDrain {
  poller: LocalStreamPoller;
  stop(): Promise<void>;
}

/**
 * Drains the outbox locally, as the stack does in AWS: first a re-drive of whatever is pending (written
 * while nothing drained), then the stream, polled every `intervalMs`. `invoke` is the outbox-drain
 * function's own process (npm start); without it the handler runs in this process (tests).
 */
export function startLocalOutboxDrain(options: {
  aws: Pick<AwsSettings, 'region' | 'dynamodb_endpoint'>;
  tableName: string;
  invoke?: DrainInvoke;
  intervalMs?: number;
}): LocalOutboxDrain {
  const invoke: DrainInvoke =
    options.invoke ??
    (async (event) => {
      const { handler } = await import('#functions/outbox-drain/handler.ts');
      return handler(event as DynamoDBStreamEvent);
    });
  const poller = new LocalStreamPoller({ aws: options.aws, tableName: options.tableName, invoke });
  const loop = pollEvery(poller, options.intervalMs ?? 1_000, 'the local outbox drain');
  const started = (async () => {
    try {
      await invoke({ action: 'redeliver-pending', older_than_minutes: 0 });
    } catch (error) {
      log.warn('the local outbox re-drive failed; the stream still drains new events', { error });
    }
    loop.start();
  })();
  return {
    poller,
    async stop() {
      await started.catch(() => undefined);
      await loop.stop();
    },
  };
}

/**
 * Polls `poller` every `intervalMs` once started (a failed poll is logged and tried again); `stop` waits
 * for the poll under way and closes the poller.
 */
export function pollEvery(poller: LocalStreamPoller, intervalMs: number, what: string) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      await poller.pollOnce();
    } catch (error) {
      log.warn(`${what} could not read the stream; trying again`, { error });
    }
    if (stopped) return;
    timer = setTimeout(() => void tick(), intervalMs);
    timer.unref();
  };
  return {
    start(): void {
      if (!stopped) void tick();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await poller.idle();
      poller.close();
    },
  };
}
