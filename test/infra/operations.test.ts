// Template checks of operating the service (bundling skipped): the worker functions with their stream,
// dead-letter queue, event archive and schedules (the takedowns' among them); the alarms, their topic and
// the dashboard; tracing per stage.
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKER_NEEDS, type WorkerName } from '#functions/needs.ts';
import { IMAGE_PATH_PATTERN } from '#infra/cdn.ts';
import { ALARM_THRESHOLDS, BUSINESS_METRICS, OBSERVABILITY_VARIABLES } from '#infra/operations-metrics.ts';
import type { ServiceFunction } from '#infra/service-function.ts';
import { stageConfigFrom } from '#infra/stage-config.ts';
import { MODERATION_STREAM, OUTBOX_STREAM } from '#infra/workers.ts';
import { EVENT_SOURCE } from '#lib/billing/order-events.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import { FILE_KEY_PREFIX, OUTBOX_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import { deployedVariablesOf } from '#lib/wiring/needs.ts';
import {
  actionsOf,
  completedProd,
  DEV_FILE,
  distributionConfigOf,
  functionIdOf,
  functionOf,
  type Json,
  logicalIdOf,
  PROD_FILE,
  resourcesOf,
  roleStatements,
  type Synth,
  synth,
} from './stack-helpers.ts';

const ALARM_EMAIL = 'oncall@example.com';
const WORKERS: WorkerName[] = ['outbox-drain', 'reconciler', 'takedowns'];

/** Every function of the stack by name: the API groups and the workers. */
function allFunctions(s: Synth): Array<[string, ServiceFunction]> {
  return [
    ...FUNCTION_GROUPS.map((group) => [group, s.stack.functions[group]] as [string, ServiceFunction]),
    ...WORKERS.map((name) => [name, s.stack.workers.functions[name]] as [string, ServiceFunction]),
  ];
}

/** The alarm named `<stack>-<name>`. */
function alarm(s: Synth, name: string): Json {
  const found = resourcesOf(s, 'AWS::CloudWatch::Alarm').filter(
    ([, resource]) => resource.Properties.AlarmName === `${s.stack.stackName}-${name}`,
  );
  expect(found, name).toHaveLength(1);
  return found[0]![1].Properties;
}

/** The metric queries of an alarm: a single metric, or the metrics and expressions of metric math. */
function queriesOf(props: Json): Json[] {
  if (props.Metrics) return props.Metrics as Json[];
  return [
    {
      MetricStat: {
        Metric: { Namespace: props.Namespace, MetricName: props.MetricName, Dimensions: props.Dimensions },
        Stat: props.Statistic ?? props.ExtendedStatistic,
      },
    },
  ];
}

const dimension = (props: Json, name: string): unknown =>
  (props.Dimensions as Json[] | undefined)?.find((d) => d.Name === name)?.Value;

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synth({
    config: stageConfigFrom(
      'prod',
      completedProd({ infra: { alarm_email: ALARM_EMAIL, reconcile_every_minutes: 10 } }),
    ),
  });
}, 120_000);

/** The stream mapping of one worker. */
function mappingOf(worker: 'outbox-drain' | 'moderation', s: Synth = dev): Json {
  const fn = { Ref: functionIdOf(s, s.stack.workers.functions[worker]) };
  const found = resourcesOf(s, 'AWS::Lambda::EventSourceMapping').find(
    ([, mapping]) => JSON.stringify(mapping.Properties.FunctionName) === JSON.stringify(fn),
  );
  if (!found) throw new Error(`no stream mapping for ${worker}`);
  return found[1];
}

describe('moderation worker', () => {
  it("reads new file records only, from the stream's newest, a few at a time, retried, then dead-lettered", () => {
    const props = mappingOf('moderation').Properties;
    expect(props.StartingPosition).toBe('LATEST');
    expect(props.BatchSize).toBe(MODERATION_STREAM.batchSize);
    expect(props.ParallelizationFactor).toBe(MODERATION_STREAM.parallelizationFactor);
    expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(props.MaximumRetryAttempts).toBe(MODERATION_STREAM.retryAttempts);
    expect(props.FilterCriteria.Filters.map((filter: Json) => JSON.parse(filter.Pattern))).toEqual([
      { eventName: ['INSERT'], dynamodb: { Keys: { pk: { S: [{ prefix: FILE_KEY_PREFIX }] } } } },
    ]);
    const queueId = logicalIdOf(dev, dev.stack.workers.moderationDeadLetters);
    expect(props.DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    });
  });

  it('may call Rekognition only where the deployment chose it, and never touches the bucket but to read', () => {
    const actions = (s: Synth) => actionsOf(roleStatements(s, s.stack.workers.functions.moderation));
    expect(actions(dev)).not.toContain('rekognition:DetectModerationLabels');
    expect(actions(dev)).toContain('s3:GetObject');
    expect(actions(dev)).not.toContain('s3:PutObject');
    const rekognition = synth({
      config: stageConfigFrom('dev', { ...DEV_FILE, moderation: { provider: 'rekognition' } }),
    });
    expect(actions(rekognition)).toContain('rekognition:DetectModerationLabels');
    for (const group of FUNCTION_GROUPS)
      expect(actionsOf(roleStatements(rekognition, group)), group).not.toContain(
        'rekognition:DetectModerationLabels',
      );
    // Moderation off: the worker is deployed but nothing feeds it.
    const off = synth({ config: stageConfigFrom('dev', { ...DEV_FILE, moderation: { enabled: false } }) });
    expect(resourcesOf(off, 'AWS::Lambda::EventSourceMapping')).toHaveLength(1);
  }, 120_000);
});

describe('outbox drain', () => {
  it('turns on the table stream with new images', () => {
    const [[, table]] = resourcesOf(dev, 'AWS::DynamoDB::Table') as [[string, Json]];
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  it('feeds the drain only inserted outbox rows and file records, in small batches, split and retried on failure', () => {
    const mappings = resourcesOf(dev, 'AWS::Lambda::EventSourceMapping');
    // The table's stream has two readers, the most DynamoDB allows per shard: the drain and moderation.
    expect(mappings).toHaveLength(2);
    const mapping = mappingOf('outbox-drain');
    const props = mapping.Properties;
    const tableId = logicalIdOf(dev, dev.stack.table);
    expect(props.FunctionName).toEqual({
      Ref: functionIdOf(dev, dev.stack.workers.functions['outbox-drain']),
    });
    expect(props.EventSourceArn).toEqual({ 'Fn::GetAtt': [tableId, 'StreamArn'] });
    expect(props.StartingPosition).toBe('TRIM_HORIZON');
    expect(props.BatchSize).toBe(OUTBOX_STREAM.batchSize);
    expect(props.BatchSize).toBeLessThanOrEqual(10);
    expect(props.BisectBatchOnFunctionError).toBe(true);
    expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(props.MaximumRetryAttempts).toBe(10);
    // Within the stream's 24 h retention.
    expect(props.MaximumRecordAgeInSeconds).toBeGreaterThan(0);
    expect(props.MaximumRecordAgeInSeconds).toBeLessThan(24 * 3600);
    expect(props.FilterCriteria.Filters.map((filter: Json) => JSON.parse(filter.Pattern))).toEqual([
      { eventName: ['INSERT'], dynamodb: { Keys: { pk: { S: [{ prefix: OUTBOX_KEY_PREFIX }] } } } },
      // New file records: their file.uploaded webhooks (docs/WEBHOOKS.md).
      { eventName: ['INSERT'], dynamodb: { Keys: { pk: { S: [{ prefix: FILE_KEY_PREFIX }] } } } },
    ]);
  });

  it('sends batches it gave up on to an encrypted, TLS-only dead-letter queue', () => {
    const mapping = mappingOf('outbox-drain');
    const queueId = logicalIdOf(dev, dev.stack.workers.outboxDeadLetters);
    expect(mapping.Properties.DestinationConfig).toEqual({
      OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    });
    const queue = dev.resources[queueId]!.Properties;
    expect(queue.SqsManagedSseEnabled).toBe(true);
    const [[, queuePolicy]] = resourcesOf(dev, 'AWS::SQS::QueuePolicy').filter(([, policy]) =>
      policy.Properties.Queues.some((q: Json) => q.Ref === queueId),
    ) as [[string, Json]];
    expect(queuePolicy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    // The drain may send its failures there, and read the stream.
    const drain = dev.stack.workers.functions['outbox-drain'];
    expect(actionsOf(roleStatements(dev, drain))).toEqual(
      expect.arrayContaining(['sqs:SendMessage', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']),
    );
  });

  it('archives the events of the payments source on the bus, a year in prod and a week in dev', () => {
    const busId = logicalIdOf(dev, dev.stack.eventBus);
    const [[, archive]] = resourcesOf(dev, 'AWS::Events::Archive') as [[string, Json]];
    expect(archive.Properties.SourceArn).toEqual({ 'Fn::GetAtt': [busId, 'Arn'] });
    expect(archive.Properties.EventPattern).toEqual({ source: [EVENT_SOURCE] });
    expect(archive.Properties.RetentionDays).toBe(DEV_FILE.infra.event_archive_days);
    const [[, prodArchive]] = resourcesOf(prod, 'AWS::Events::Archive') as [[string, Json]];
    expect(prodArchive.Properties.RetentionDays).toBe(365);
  });
});

describe('reconciler', () => {
  it('runs on the stage schedule, retried by EventBridge, never piled up by Lambda retries', () => {
    const reconcilerId = functionIdOf(dev, dev.stack.workers.functions.reconciler);
    const schedule = (s: Synth) => {
      const rules = resourcesOf(s, 'AWS::Events::Rule').filter(([, rule]) =>
        (rule.Properties.Targets ?? []).some(
          (target: Json) =>
            target.Arn?.['Fn::GetAtt']?.[0] === functionIdOf(s, s.stack.workers.functions.reconciler),
        ),
      );
      expect(rules).toHaveLength(1);
      return rules[0]![1].Properties;
    };
    expect(schedule(dev).ScheduleExpression).toBe('rate(5 minutes)');
    // Fanned out: one target per range of the schedule's shards, together every shard once.
    const ranges = (schedule(dev).Targets as Json[]).map((target) => JSON.parse(target.Input).shards);
    expect(ranges).toEqual([
      { from: 0, to: 4 },
      { from: 4, to: 8 },
      { from: 8, to: 12 },
      { from: 12, to: 16 },
    ]);
    expect(schedule(dev).State).toBe('ENABLED');
    expect(schedule(dev).Targets[0].RetryPolicy).toEqual({
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 300,
    });
    expect(schedule(prod).ScheduleExpression).toBe('rate(10 minutes)');
    // The next run is the retry: Lambda does not run a failed one again on its own.
    dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: reconcilerId },
      MaximumRetryAttempts: 0,
    });
    dev.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [reconcilerId, 'Arn'] },
    });
  });
});

describe('account-lifecycle', () => {
  it('runs every minute for up to 15 minutes (one export of tens of GiB), retried by EventBridge only', () => {
    const worker = dev.stack.workers.functions['account-lifecycle'];
    const workerId = functionIdOf(dev, worker);
    const rules = resourcesOf(dev, 'AWS::Events::Rule').filter(([, rule]) =>
      (rule.Properties.Targets ?? []).some((target: Json) => target.Arn?.['Fn::GetAtt']?.[0] === workerId),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties.ScheduleExpression).toBe('rate(1 minute)');
    dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: workerId },
      MaximumRetryAttempts: 0,
    });
    expect(functionOf(dev, worker).Timeout).toBe(900);
    // No stream reader: the table keeps its two (the outbox drain and moderation).
    expect(
      resourcesOf(dev, 'AWS::Lambda::EventSourceMapping').filter(
        ([, mapping]) => mapping.Properties.FunctionName?.Ref === workerId,
      ),
    ).toEqual([]);
  });
});

describe('takedowns', () => {
  it('runs every minute, retried by EventBridge within the minute, never by Lambda', () => {
    const takedownsId = functionIdOf(dev, dev.stack.workers.functions.takedowns);
    const rules = resourcesOf(dev, 'AWS::Events::Rule').filter(([, rule]) =>
      (rule.Properties.Targets ?? []).some((target: Json) => target.Arn?.['Fn::GetAtt']?.[0] === takedownsId),
    );
    expect(rules).toHaveLength(1);
    const props = rules[0]![1].Properties;
    expect(props.ScheduleExpression).toBe('rate(1 minute)');
    expect(props.State).toBe('ENABLED');
    expect(props.Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 60 });
    dev.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: takedownsId },
      MaximumRetryAttempts: 0,
    });
    // Under a minute, so two runs never overlap: one invalidation request a minute at most.
    expect(functionOf(dev, dev.stack.workers.functions.takedowns).Timeout).toBeLessThan(60);
  });

  it('may create invalidations on the one distribution only, and is the only function that may', () => {
    const [[cdnId]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const takedowns = dev.stack.workers.functions.takedowns;
    const cloudfront = roleStatements(dev, takedowns).filter((statement) =>
      String(statement.Action).includes('cloudfront:'),
    );

    expect(cloudfront).toHaveLength(1);
    expect(cloudfront[0]!.Action).toBe('cloudfront:CreateInvalidation');
    expect(cloudfront[0]!.Resource).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':cloudfront::',
          { Ref: 'AWS::AccountId' },
          ':distribution/',
          { Ref: cdnId },
        ],
      ],
    });
    expect(functionOf(dev, takedowns).Environment.Variables.CDN__DISTRIBUTION_ID).toEqual({ Ref: cdnId });
    const invalidating = allFunctions(dev)
      .filter(([, fn]) =>
        actionsOf(roleStatements(dev, fn)).some((action) => action.startsWith('cloudfront:')),
      )
      .map(([name]) => name);
    expect(invalidating).toEqual(['takedowns']);
  });
});

describe("the takedowns' deny-list", () => {
  it('is one KeyValueStore the /i/* edge function reads, written by the takedowns worker alone', () => {
    const [store, ...others] = resourcesOf(dev, 'AWS::CloudFront::KeyValueStore');
    const [storeId] = store!;
    const storeArn = { 'Fn::GetAtt': [storeId, 'Arn'] };
    const takedowns = dev.stack.workers.functions.takedowns;
    const kvs = roleStatements(dev, takedowns).filter((statement) =>
      String(statement.Action).includes('cloudfront-keyvaluestore:'),
    );
    const images = distributionConfigOf(dev).CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );
    const imageFunctionId = images.FunctionAssociations[0].FunctionARN['Fn::GetAtt'][0];

    expect(others).toEqual([]);
    // Its version and its keys' writes, on this store only; the store's own ARN in the worker's settings.
    expect(kvs).toEqual([
      {
        Effect: 'Allow',
        Action: ['cloudfront-keyvaluestore:DescribeKeyValueStore', 'cloudfront-keyvaluestore:UpdateKeys'],
        Resource: storeArn,
      },
    ]);
    expect(functionOf(dev, takedowns).Environment.Variables.CDN__DENY_LIST_ARN).toEqual(storeArn);
    const writers = allFunctions(dev)
      .filter(([, fn]) =>
        actionsOf(roleStatements(dev, fn)).some((action) => action.startsWith('cloudfront-keyvaluestore:')),
      )
      .map(([name]) => name);
    expect(writers).toEqual(['takedowns']);
    expect(dev.resources[imageFunctionId]!.Properties.FunctionConfig.KeyValueStoreAssociations).toEqual([
      { KeyValueStoreARN: storeArn },
    ]);
  });
});

describe('scheduled workers that keep up (docs/CAPACITY.md "Workers")', () => {
  it('runs the reminders every 5 minutes, sending for most of each period; the reconciler within its own', () => {
    const reminders = dev.stack.workers.functions.reminders;
    const remindersId = functionIdOf(dev, reminders);
    const rules = resourcesOf(dev, 'AWS::Events::Rule').filter(([, rule]) =>
      (rule.Properties.Targets ?? []).some((target: Json) => target.Arn?.['Fn::GetAtt']?.[0] === remindersId),
    );

    expect(rules.map(([, rule]) => rule.Properties.ScheduleExpression)).toEqual(['rate(5 minutes)']);
    expect(functionOf(dev, reminders).Timeout).toBeGreaterThan(4 * 60);
    expect(functionOf(dev, reminders).Timeout).toBeLessThan(5 * 60);
    expect(functionOf(dev, dev.stack.workers.functions.reconciler).Timeout).toBeLessThan(5 * 60);
  });
});

describe('outbox re-drive', () => {
  it('asks the drain every 15 minutes to deliver what the stream gave up on', () => {
    const drainId = functionIdOf(dev, dev.stack.workers.functions['outbox-drain']);
    const rules = resourcesOf(dev, 'AWS::Events::Rule').filter(([, rule]) =>
      (rule.Properties.Targets ?? []).some((target: Json) => target.Arn?.['Fn::GetAtt']?.[0] === drainId),
    );
    // The re-drive every 15 minutes, and the webhook deliveries due again every minute.
    expect(rules).toHaveLength(2);
    const schedules = Object.fromEntries(
      rules.map(([, rule]) => [
        rule.Properties.ScheduleExpression,
        JSON.parse(rule.Properties.Targets[0].Input),
      ]),
    );
    expect(schedules).toEqual({
      'rate(15 minutes)': { action: 'redeliver-pending', older_than_minutes: 15 },
      'rate(1 minute)': { action: 'webhook-retries' },
    });
  });
});

describe('worker functions', () => {
  it('carry the variables and grants of their needs, like the API groups', () => {
    for (const name of WORKERS) {
      const fn = dev.stack.workers.functions[name];
      const env = Object.keys(functionOf(dev, fn).Environment.Variables as Json).sort();
      expect(env, name).toEqual(
        [...deployedVariablesOf(WORKER_NEEDS[name]), ...OBSERVABILITY_VARIABLES].sort(),
      );
      const actions = actionsOf(roleStatements(dev, fn));
      const needs = WORKER_NEEDS[name];
      expect(actions.includes('dynamodb:PutItem'), name).toBe(needs.table === 'readwrite');
      expect(actions.includes('events:PutEvents'), name).toBe(needs.events === true);
      expect(
        actions.some((action) => action.startsWith('kms:')),
        name,
      ).toBe(needs.masterKey === true);
      expect(
        actions.some((action) => action.startsWith('s3:')),
        name,
      ).toBe(false);
    }
  });
});

describe('alarms', () => {
  it('notify one encrypted, TLS-only topic when they fire and when they clear', () => {
    const [[topicId, topic], ...others] = resourcesOf(dev, 'AWS::SNS::Topic') as [[string, Json]];
    expect(others).toEqual([]);
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    const [[, topicPolicy]] = resourcesOf(dev, 'AWS::SNS::TopicPolicy').filter(([, policy]) =>
      policy.Properties.Topics.some((t: Json) => t.Ref === topicId),
    ) as [[string, Json]];
    expect(topicPolicy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // The policy replaces SNS's default one: CloudWatch must be allowed by name, for this stack's alarms only.
    const allowCloudWatch = (topicPolicy.Properties.PolicyDocument.Statement as Json[]).find(
      (statement) =>
        statement.Effect === 'Allow' && statement.Principal?.Service === 'cloudwatch.amazonaws.com',
    );
    expect(allowCloudWatch?.Action).toBe('sns:Publish');
    expect(JSON.stringify(allowCloudWatch?.Condition.ArnLike)).toContain(`:alarm:${dev.stack.stackName}-*`);
    const alarms = resourcesOf(dev, 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThanOrEqual(10);
    for (const [id, resource] of alarms) {
      expect(resource.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(resource.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
      expect(resource.Properties.AlarmDescription, id).toContain('Operating it');
    }
  });

  it('lets CloudWatch encrypt notifications with the topic key', () => {
    const [[, topic]] = resourcesOf(dev, 'AWS::SNS::Topic') as [[string, Json]];
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    expect(dev.resources[keyId]!.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    expect(dev.resources[keyId]!.Properties.EnableKeyRotation).toBe(true);
  });

  it('subscribes the alarm e-mail only where the stage names one', () => {
    expect(resourcesOf(dev, 'AWS::SNS::Subscription')).toEqual([]);
    const [[, subscription], ...others] = resourcesOf(prod, 'AWS::SNS::Subscription') as [[string, Json]];
    expect(others).toEqual([]);
    expect(subscription.Properties).toMatchObject({ Protocol: 'email', Endpoint: ALARM_EMAIL });
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, alarm_email: 'not-an-address' } }),
    ).toThrow(/infra\.alarm_email/);
  });

  it('fire on an API 5xx rate over 1% (from 10 requests) in 5 minutes', () => {
    const props = alarm(dev, 'api-5xx-rate');
    const apiId = dev.stack.getLogicalId(dev.stack.api.node.defaultChild as never);
    const expression = props.Metrics.find((query: Json) => query.Expression);
    expect(expression.Expression).toBe('IF(requests >= 10, 100 * errors / requests, 0)');
    const byId = Object.fromEntries(props.Metrics.map((query: Json) => [query.Id, query]));
    expect(byId.errors.MetricStat.Metric).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: '5xx' });
    expect(byId.requests.MetricStat.Metric).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Count',
    });
    expect(byId.errors.MetricStat.Metric.Dimensions).toEqual(
      expect.arrayContaining([{ Name: 'ApiId', Value: { Ref: apiId } }]),
    );
    expect(props.Threshold).toBe(ALARM_THRESHOLDS.apiServerErrorPercent);
    expect(props.ComparisonOperator).toBe('GreaterThanOrEqualToThreshold');
  });

  it('fire on an API p99 latency of 3 s or more for 15 minutes', () => {
    const props = alarm(dev, 'api-latency-p99');
    expect(props).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Period: 300,
      EvaluationPeriods: 3,
      Threshold: 3000,
    });
  });

  it('fire on any 5xx of the payment callback function URL', () => {
    const props = alarm(dev, 'callback-url-5xx');
    expect(props).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Url5xxCount', Statistic: 'Sum' });
    expect(dimension(props, 'FunctionName')).toEqual({
      Ref: functionIdOf(dev, dev.stack.functions['payment-callback']),
    });
    expect(props.Threshold).toBe(1);
  });

  it("fire on each function's throttles and on a run at 80% of its timeout", () => {
    for (const [name, fn] of allFunctions(dev)) {
      const ref = { Ref: functionIdOf(dev, fn) };
      const throttles = alarm(dev, `${name}-throttles`);
      expect(throttles, name).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Threshold: 1,
      });
      expect(dimension(throttles, 'FunctionName'), name).toEqual(ref);
      const duration = alarm(dev, `${name}-duration-near-timeout`);
      expect(duration, name).toMatchObject({ MetricName: 'Duration', Statistic: 'Maximum' });
      expect(dimension(duration, 'FunctionName'), name).toEqual(ref);
      expect(duration.Threshold, name).toBe(Math.round(functionOf(dev, fn).Timeout * 1000 * 0.8));
    }
  });

  it('fire on throttled requests to the table', () => {
    const props = alarm(dev, 'table-throttles');
    const tableId = logicalIdOf(dev, dev.stack.table);
    const metrics = queriesOf(props).filter((query) => query.MetricStat);
    expect(metrics.length).toBeGreaterThan(0);
    for (const query of metrics) {
      expect(query.MetricStat.Metric).toMatchObject({
        Namespace: 'AWS/DynamoDB',
        MetricName: 'ThrottledRequests',
      });
      expect(query.MetricStat.Metric.Dimensions).toContainEqual({
        Name: 'TableName',
        Value: { Ref: tableId },
      });
    }
    const operations = metrics.map((query) => dimension(query.MetricStat.Metric, 'Operation'));
    expect(operations).toEqual(
      expect.arrayContaining(['PutItem', 'UpdateItem', 'TransactWriteItems', 'Query']),
    );
    expect(props.Threshold).toBe(1);
  });

  it('fire as soon as the outbox dead-letter queue holds a message', () => {
    const props = alarm(dev, 'outbox-dead-letters');
    expect(props).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Statistic: 'Maximum',
      Threshold: 1,
    });
    expect(dimension(props, 'QueueName')).toEqual({
      'Fn::GetAtt': [logicalIdOf(dev, dev.stack.workers.outboxDeadLetters), 'QueueName'],
    });
  });

  it('fire when order.paid reaches the bus 5 minutes late, or the drain lags the stream as much', () => {
    const namespace = dev.stack.operations.metricsNamespace;
    const age = alarm(dev, 'outbox-age');
    expect(age.Metrics).toHaveLength(1);
    expect(age.Metrics[0]).toMatchObject({
      Expression: `SELECT MAX(${BUSINESS_METRICS.outboxAgeMs}) FROM SCHEMA("${namespace}", service)`,
      Period: 300,
    });
    expect(age.Threshold).toBe(300_000);
    const lag = alarm(dev, 'outbox-stream-lag');
    expect(lag).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'IteratorAge', Threshold: 300_000 });
    expect(dimension(lag, 'FunctionName')).toEqual({
      Ref: functionIdOf(dev, dev.stack.workers.functions['outbox-drain']),
    });
  });

  it('fire on 20 or more refused callbacks in 15 minutes, whatever their reason or channel', () => {
    const props = alarm(dev, 'callbacks-refused');
    expect(props.Metrics[0]).toMatchObject({
      Expression: `SELECT SUM(${BUSINESS_METRICS.callbacksRefused}) FROM SCHEMA("${dev.stack.operations.metricsNamespace}", service)`,
      Period: 900,
    });
    expect(props.Threshold).toBe(20);
  });

  it('fire when a reconciler run fails', () => {
    const props = alarm(dev, 'reconciler-errors');
    expect(props).toMatchObject({ MetricName: 'Errors', Threshold: 1 });
    expect(dimension(props, 'FunctionName')).toEqual({
      Ref: functionIdOf(dev, dev.stack.workers.functions.reconciler),
    });
  });

  it('read custom metrics from the namespace every function records them in', () => {
    for (const [name, fn] of allFunctions(dev)) {
      const env = functionOf(dev, fn).Environment.Variables as Json;
      expect(env.POWERTOOLS_METRICS_NAMESPACE, name).toBe(dev.stack.operations.metricsNamespace);
      expect(env.POWERTOOLS_SERVICE_NAME, name).toBe(name);
    }
    expect(dev.stack.operations.metricsNamespace).not.toBe(prod.stack.operations.metricsNamespace);
  });
});

describe('dashboard', () => {
  it('shows every alarm and the figures behind them', () => {
    const [[, dashboard], ...others] = resourcesOf(dev, 'AWS::CloudWatch::Dashboard') as [[string, Json]];
    expect(others).toEqual([]);
    expect(dashboard.Properties.DashboardName).toBe(dev.stack.stackName);
    // The body is a Fn::Join of JSON text and references: read it as text, references by logical id.
    const body = (dashboard.Properties.DashboardBody['Fn::Join'][1] as unknown[])
      .map((part) => (typeof part === 'string' ? part : JSON.stringify(part)))
      .join('');
    for (const figure of [
      '"5xx"',
      '"Latency"',
      'Url5xxCount',
      'Throttles',
      'Duration',
      'ThrottledRequests',
      'ApproximateNumberOfMessagesVisible',
      'IteratorAge',
      BUSINESS_METRICS.outboxAgeMs,
      BUSINESS_METRICS.callbacksRefused,
    ]) {
      expect(body, figure).toContain(figure);
    }
    // The alarm status widget lists every alarm.
    for (const [id] of resourcesOf(dev, 'AWS::CloudWatch::Alarm')) expect(body, id).toContain(id);
    expect(dev.template.findOutputs('DashboardUrl')).not.toEqual({});
  });
});

describe('tracing', () => {
  it('is on in prod: active X-Ray on every function, allowed to write traces, Powertools tracing on', () => {
    for (const [name, fn] of allFunctions(prod)) {
      const props = functionOf(prod, fn);
      expect(props.TracingConfig, name).toEqual({ Mode: 'Active' });
      expect(props.Environment.Variables.POWERTOOLS_TRACE_ENABLED, name).toBe('true');
      expect(actionsOf(roleStatements(prod, fn)), name).toEqual(
        expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
      );
    }
  });

  it('is off in dev: no X-Ray mode, no X-Ray grant, Powertools tracing off', () => {
    for (const [name, fn] of allFunctions(dev)) {
      const props = functionOf(dev, fn);
      expect(props.TracingConfig, name).toBeUndefined();
      expect(props.Environment.Variables.POWERTOOLS_TRACE_ENABLED, name).toBe('false');
      expect(
        actionsOf(roleStatements(dev, fn)).some((action) => action.startsWith('xray:')),
        name,
      ).toBe(false);
    }
  });

  it('never captures responses (they carry tokens), but errors and the calls to the channels', () => {
    for (const [name, fn] of allFunctions(prod)) {
      const env = functionOf(prod, fn).Environment.Variables as Json;
      expect(env.POWERTOOLS_TRACER_CAPTURE_RESPONSE, name).toBe('false');
      expect(env.POWERTOOLS_TRACER_CAPTURE_ERROR, name).toBe('true');
      expect(env.POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS, name).toBe('true');
    }
  });

  it('defaults to on for prod and off elsewhere; a stage may say otherwise', () => {
    const { tracing: _prodTracing, ...prodInfra } = PROD_FILE.infra;
    const prodConfig = stageConfigFrom('prod', {
      ...PROD_FILE,
      mail: { from: 'no-reply@mail.example.com' },
      infra: { ...prodInfra, account: '123456789012' },
    });
    expect(prodConfig.infra.tracing).toBe(true);
    const { tracing: _devTracing, ...devInfra } = DEV_FILE.infra;
    expect(stageConfigFrom('dev', { ...DEV_FILE, infra: devInfra }).infra.tracing).toBe(false);
    expect(stageConfigFrom('dev', { ...DEV_FILE, infra: { ...devInfra, tracing: true } }).infra.tracing).toBe(
      true,
    );
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged with the operations resources in dev and prod', () => {
    expect(dev.nag.validateScope(dev.app).violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(prod.nag.validateScope(prod.app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
