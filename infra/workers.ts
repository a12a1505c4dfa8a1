// The functions that serve no route (docs/DESIGN.md 14): the outbox drain on the table's stream, the
// payment reconciler on a schedule, the CDN takedowns every minute, the renewal reminders, and what makes
// their deliveries safe (dead-letter queue, event archive). The scheduled ones fan out inside each run
// (every shard of their listing read at once, docs/CAPACITY.md "Workers").
import { CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import { type ITable, StreamViewType } from 'aws-cdk-lib/aws-dynamodb';
import { type EventBus, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { WORKER_NAMES, WORKER_NEEDS, type WorkerName } from '#functions/needs.ts';
import { shardRanges } from '#functions/reconciler/fan-out.ts';
import { EVENT_SOURCE, PUT_EVENTS_MAX_ENTRIES } from '#lib/billing/order-events.ts';
import { MODERATION_BATCH } from '#lib/moderation/classification.ts';
import {
  FILE_KEY_PREFIX,
  OUTBOX_KEY_PREFIX,
  TABLE_STREAM_VIEW as TABLE_STREAM_VIEW_NAME,
} from '#lib/platform/db/keys.ts';
import { CDN_LOG_PREFIX } from '#lib/platform/storage/access-logs.ts';
import { bucketObjectsFinding } from './data.ts';
import { type FunctionClass, type NeedResources, ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';

/** The table's stream view (the drain needs each new item whole, not just its key). */
export const TABLE_STREAM_VIEW = StreamViewType[TABLE_STREAM_VIEW_NAME];

interface WorkerSpec {
  functionClass: FunctionClass;
  timeoutSeconds: number;
  description: string;
}

/** Size and time per worker; a Record so a new worker does not compile until it has one. */
export const WORKER_SPECS: Record<WorkerName, WorkerSpec> = {
  // One batch (OUTBOX_STREAM.batchSize): its claims, one PutEvents call and its marks; the SDK retries
  // each call 3 times. Beside them the batch's webhooks, each POST at most 5 s, all at once.
  'outbox-drain': {
    functionClass: 'light',
    timeoutSeconds: 30,
    description: 'Delivers order.paid from the outbox (table stream) to the event bus, and the webhooks',
  },
  // Every shard of the schedule read at once, one query per due channel order (at most
  // payment.reconcile.max_orders_per_run, payment.reconcile.channel_concurrency in flight at each channel),
  // each bounded by the channel client's own timeout; it starts none with less than 15 s left. Under the
  // 5-minute schedule, so runs do not overlap (docs/CAPACITY.md "Workers").
  reconciler: {
    functionClass: 'io',
    timeoutSeconds: 240,
    description: 'Asks the payment channels about pending orders and settles those they report paid',
  },
  // Every shard's recorded takedowns onto the edge's deny-list (KeyValueStore writes of 50 keys, one at a
  // time), one CreateInvalidation, the deletes of what it sent; under a minute, so two runs never overlap
  // and the batches stay one request a minute.
  takedowns: {
    functionClass: 'light',
    timeoutSeconds: 50,
    description:
      "Puts the back office's takedowns on the edge's deny-list and sends one invalidation a minute",
  },
  // Every shard of the index of grant end dates at once, a marker, a read, a mail and an unlisting each, at
  // billing.reminders_per_second; it starts none with less than 10 s left, so it keeps sending for nearly
  // its whole 5-minute period (docs/CAPACITY.md "Workers").
  reminders: {
    functionClass: 'light',
    timeoutSeconds: 280,
    description: 'Mails renewal reminders before paid plans end, once per grant',
  },
  // The new CDN log objects of the last two days (one listing of cdn/, then only those not yet counted),
  // a transaction per object, then the owners counted or stopped (docs/CAPACITY.md "Workers").
  bandwidth: {
    functionClass: 'light',
    timeoutSeconds: 280,
    description: "Counts the CDN's logs per owner, mails bandwidth notices, stops and resumes serving",
  },
  // One batch (MODERATION_STREAM.batchSize) of new files, each read and classified on one full vCPU (the
  // model's load on a cold start, then under a second a file: docs/PERFORMANCE.md "Moderation").
  moderation: {
    functionClass: 'image-rendering',
    timeoutSeconds: 120,
    description: 'Classifies every new file for moderation: published, flagged or held for review',
  },
  // One query of the bans, then a GetIPSet and at most an UpdateIPSet per set (one retry on a lost race).
  'ban-mirror': {
    functionClass: 'light',
    timeoutSeconds: 30,
    description: "Writes the bans in force into the WAF's IP sets of banned networks",
  },
  // The exports owners asked for, one at a time (each a streamed ZIP: memory that of one export, about
  // 100 MiB whatever its size, docs/PERFORMANCE.md "Account export"), then the deletions due. Long
  // enough for an export of tens of GiB; a run still going skips the next minute's (the claim is held).
  'account-lifecycle': {
    functionClass: 'io',
    timeoutSeconds: 900,
    description: "Builds owners' data exports and deletes accounts whose 7-day grace is over",
  },
};

/**
 * How often the reminders worker runs: with its timeout (280 s) it sends for most of each period, so the
 * SES rate it is given is nearly all used (1 million a day at 14/s).
 */
export const REMINDERS_EVERY_MINUTES = 5;

/** How often the takedowns worker sends its batch (a takedown leaves the CDN within 5 minutes). */
export const TAKEDOWN_EVERY_MINUTES = 1;

/**
 * How often the bandwidth worker counts the CDN's logs: CloudFront delivers them minutes to an hour late,
 * so an owner past the cap plus grace stops within that delay plus 5 minutes plus the edge's 2 minutes.
 */
export const BANDWIDTH_EVERY_MINUTES = 5;

/** How often the ban mirror writes the WAF's IP sets (the functions refuse a ban within their refresh). */
export const BAN_MIRROR_EVERY_MINUTES = 1;

/** How often the account-lifecycle worker looks for exports asked for and deletions due. */
export const LIFECYCLE_EVERY_MINUTES = 1;

/** How the stream reaches the drain: small batches, split on failure, retried, then dead-lettered. */
export const OUTBOX_STREAM = {
  // EventBridge takes at most this many entries in one PutEvents: a batch is published in one call.
  batchSize: PUT_EVENTS_MAX_ENTRIES,
  retryAttempts: 10,
  // Well inside the stream's 24 h retention, so a dead-lettered batch can still be read back for hours.
  maxRecordAge: Duration.hours(6),
} as const;

/**
 * How the stream reaches the moderation worker: a few files a batch (each about a second of CPU), several
 * batches of one shard at once so a burst of uploads is classified within seconds, retried, then
 * dead-lettered (the file keeps its stated state: flagged, or held under hold-all).
 */
export const MODERATION_STREAM = {
  ...MODERATION_BATCH,
  parallelizationFactor: 5,
  maxRecordAge: Duration.hours(6),
} as const;

export interface WorkersProps {
  config: StageConfig;
  /** Must have its stream on (TABLE_STREAM_VIEW). */
  table: ITable;
  eventBus: EventBus;
  /** The same resources the API groups get their needs from. */
  resources: NeedResources;
}

/**
 * The periodic re-drive of the outbox: every 15 minutes, events pending for more than 15 (the stream has had
 * its chance: ten retries with backoff take a few minutes).
 */
export const OUTBOX_REDRIVE = { everyMinutes: 15, olderThanMinutes: 15 } as const;

export class Workers extends Construct {
  readonly functions: Record<WorkerName, ServiceFunction>;
  /** Where the stream's batches go once retries are spent: the outbox's dead-letter queue. */
  readonly outboxDeadLetters: Queue;
  /** Where new files the moderation worker could not classify go once retries are spent. */
  readonly moderationDeadLetters: Queue;

  constructor(scope: Construct, id: string, props: WorkersProps) {
    super(scope, id);
    const { config, table } = props;

    const make = (name: WorkerName): ServiceFunction => {
      const spec = WORKER_SPECS[name];
      // `Worker-`, not `Fn-`: the deployed-shape test runs the `Fn-` (API) functions by that path.
      return new ServiceFunction(this, `Worker-${name}`, {
        group: name,
        functionClass: spec.functionClass,
        timeout: Duration.seconds(spec.timeoutSeconds),
        config,
        description: spec.description,
      }).applyNeeds(WORKER_NEEDS[name], props.resources);
    };
    const made = WORKER_NAMES.map((name) => [name, make(name)] as const);
    this.functions = Object.fromEntries(made) as Record<WorkerName, ServiceFunction>;
    for (const name of WORKER_NAMES.filter((worker) => WORKER_NEEDS[worker].accessLogs)) {
      Validations.of(this.functions[name]).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(props.resources.accessLogs, CDN_LOG_PREFIX)}]`,
        reason:
          'CloudFront names each log object it delivers (cdn/<distribution>.<hour>.<id>.gz), so GetObject (the ' +
          'only object action) is granted on that prefix of the access-log bucket and nowhere else.',
      });
    }

    this.outboxDeadLetters = new Queue(this, 'OutboxDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS keeps nothing longer; the alarm fires on the first message, long before.
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.outboxDeadLetters).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter destination of the outbox stream; nothing drains it.',
    });

    const drain = this.functions['outbox-drain'];
    drain.fn.addEventSource(
      new DynamoEventSource(table, {
        // TRIM_HORIZON: when the mapping is (re)created it starts from the oldest record still in the
        // stream, so an order.paid written meanwhile is not skipped. Redelivery is harmless: delivery is at
        // least once and order_id is the consumers' idempotency key (lib/billing/order-events.ts).
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: OUTBOX_STREAM.batchSize,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: OUTBOX_STREAM.retryAttempts,
        maxRecordAge: OUTBOX_STREAM.maxRecordAge,
        onFailure: new SqsDlq(this.outboxDeadLetters),
        // Only new outbox rows and new file records (their file.uploaded webhooks, docs/WEBHOOKS.md) wake
        // the drain; every other write to the table is filtered out by Lambda.
        filters: [OUTBOX_KEY_PREFIX, FILE_KEY_PREFIX].map((prefix) =>
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: { Keys: { pk: { S: FilterRule.beginsWith(prefix) } } },
          }),
        ),
      }),
    );
    Validations.of(drain).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams (granted with the stream read by the event source) has no resource-level ' +
        'permission; reading records is granted on this table stream only.',
    });

    // The table's second stream reader (DynamoDB allows two per shard): new file records only.
    this.moderationDeadLetters = new Queue(this, 'ModerationDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.moderationDeadLetters).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter destination of the moderation stream; nothing drains it.',
    });
    const moderation = this.functions.moderation;
    if (config.settings.moderation.enabled)
      moderation.fn.addEventSource(
        new DynamoEventSource(table, {
          // LATEST: files stored before the mapping existed are not classified by it (docs/MODERATION.md).
          startingPosition: StartingPosition.LATEST,
          ...MODERATION_STREAM,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(this.moderationDeadLetters),
          filters: [
            FilterCriteria.filter({
              eventName: FilterRule.isEqual('INSERT'),
              dynamodb: { Keys: { pk: { S: FilterRule.beginsWith(FILE_KEY_PREFIX) } } },
            }),
          ],
        }),
      );
    Validations.of(moderation).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(props.resources.bucket)}]`,
      reason:
        'Object keys are minted per upload (<prefix>/<yyyy>/<mm>/<dd>/<uuid>...), so GetObject (the only ' +
        'object action: it reads the originals it classifies) is granted on the key space of this one bucket.',
    });
    Validations.of(moderation).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams (granted with the stream read by the event source) and, where the deployment ' +
        'chose Rekognition, rekognition:DetectModerationLabels have no resource-level permission.',
    });

    // Replayable history of what the service published (docs/DEPLOYMENT.md "Operating it").
    const archive = props.eventBus.archive('Archive', {
      archiveName: `${Stack.of(this).stackName}-events`,
      description: `order.paid and the other events of ${EVENT_SOURCE}, kept for replay`,
      eventPattern: { source: [EVENT_SOURCE] },
      retention: Duration.days(config.infra.eventArchiveDays),
    });

    // A worker run on a schedule: EventBridge retries an invocation Lambda did not accept; past one interval
    // the next run covers it. The next run is the retry: one retried asynchronously would only overlap it.
    // A run that fans out is one target per input, invoked at once (a rule takes at most 5 targets).
    const schedule = (
      id: string,
      description: string,
      worker: WorkerName,
      minutes: number,
      inputs: object[] = [],
    ) => {
      const every = Duration.minutes(minutes);
      const fn = this.functions[worker].fn;
      const rule = new Rule(this, id, { description, schedule: Schedule.rate(every) });
      for (const input of inputs.length > 0 ? inputs : [undefined]) {
        rule.addTarget(
          new LambdaTarget(fn, {
            retryAttempts: 2,
            maxEventAge: every,
            ...(input ? { event: RuleTargetInput.fromObject(input) } : {}),
          }),
        );
      }
      fn.configureAsyncInvoke({ retryAttempts: 0 });
    };
    // Fanned out: RECONCILE_FAN_OUT invocations, each reading its own range of the schedule's shards.
    schedule(
      'ReconcileSchedule',
      'Runs the payment reconciler (pending orders whose callback never came)',
      'reconciler',
      config.infra.reconcileEveryMinutes,
      shardRanges(config.settings.listing_shards).map((shards) => ({ shards })),
    );

    // What the stream gave up on (the bus down past every retry, a record older than maxRecordAge) stays
    // pending in the table: a periodic re-drive delivers it once the bus is back, with no operator.
    new Rule(this, 'OutboxRedriveSchedule', {
      description: 'Re-drives order.paid events still pending in the outbox',
      schedule: Schedule.rate(Duration.minutes(OUTBOX_REDRIVE.everyMinutes)),
    }).addTarget(
      new LambdaTarget(drain.fn, {
        event: RuleTargetInput.fromObject({
          action: 'redeliver-pending',
          older_than_minutes: OUTBOX_REDRIVE.olderThanMinutes,
        }),
        retryAttempts: 2,
        maxEventAge: Duration.minutes(OUTBOX_REDRIVE.everyMinutes),
      }),
    );

    // Webhook deliveries due again after a failed attempt (docs/WEBHOOKS.md), every minute.
    schedule('WebhookRetrySchedule', 'Tries again the webhook deliveries due', 'outbox-drain', 1, [
      { action: 'webhook-retries' },
    ]);

    // The back office's takedowns: onto the edge's deny-list, then one CreateInvalidation a minute (its
    // grants, from its need `cdn`, are that one action on this distribution and the deny-list's writes; no
    // API function holds them). An asynchronous retry would make a second request that minute.
    schedule(
      'TakedownSchedule',
      'Sends pending CDN takedowns in one invalidation',
      'takedowns',
      TAKEDOWN_EVERY_MINUTES,
    );
    // Renewal reminders (docs/DESIGN.md 17): every 5 minutes.
    schedule(
      'RemindersSchedule',
      'Mails renewal reminders before paid plans end',
      'reminders',
      REMINDERS_EVERY_MINUTES,
    );

    // Bandwidth per owner (docs/UPLOADS.md "Bandwidth"): on a schedule rather than on each log object's
    // ObjectCreated, so a burst of log objects is one run, not one invocation each.
    schedule(
      'BandwidthSchedule',
      "Counts the CDN's logs per owner and applies the bandwidth caps",
      'bandwidth',
      BANDWIDTH_EVERY_MINUTES,
    );

    // The bans onto the web ACL's IP sets (docs/DEPLOYMENT.md "WAF"): only where this stack has made them.
    if (props.resources.bannedAddressSets)
      schedule(
        'BanMirrorSchedule',
        "Writes the bans in force into the WAF's IP sets",
        'ban-mirror',
        BAN_MIRROR_EVERY_MINUTES,
      );

    // Account exports and deletions (docs/ACCOUNTS.md): a minute after they are asked for or due.
    Validations.of(this.functions['account-lifecycle']).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${bucketObjectsFinding(props.resources.bucket)}]`,
      reason:
        "It reads an owner's originals (keys minted per upload), writes the export under exports/<id>.zip and " +
        "deletes a deleted account's objects and renditions: object actions on the key space of this one bucket.",
    });
    schedule(
      'AccountLifecycleSchedule',
      "Builds owners' data exports and deletes accounts past their grace",
      'account-lifecycle',
      LIFECYCLE_EVERY_MINUTES,
    );

    // What the procedures of docs/DEPLOYMENT.md "Operating it" name.
    const stack = Stack.of(this);
    new CfnOutput(stack, 'OutboxDrainFunctionName', {
      value: drain.fn.functionName,
      description: 'Invoke with {"action":"redeliver-pending"} to re-drive the outbox',
    });
    new CfnOutput(stack, 'OutboxDeadLetterQueueUrl', { value: this.outboxDeadLetters.queueUrl });
    new CfnOutput(stack, 'ReconcilerFunctionName', { value: this.functions.reconciler.fn.functionName });
    new CfnOutput(stack, 'EventArchiveArn', {
      value: archive.archiveArn,
      description: 'aws events start-replay --event-source-arn',
    });
  }
}
