// Operating the service (docs/DESIGN.md 14, docs/DEPLOYMENT.md "Operating it"): tracing and the Powertools
// settings on every function, the alarms and the topic they notify, and one dashboard with their figures.
import { Aws, CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type HorizontalAnnotation,
  type IMetric,
  MathExpression,
  type Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type CfnFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { KEY_POLICY_ACTIONS } from './key-policy.ts';
import type { ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';
import type { Workers } from './workers.ts';

/**
 * The business metrics the alarms and the dashboard read, by the exact names the code records them with
 * (lib/platform/observability/metrics.ts `recordMetric`, Powertools EMF in the namespace below). Renaming one
 * here or at its emitter silences an alarm: keep both in step.
 * - CallbacksRefused (Count): payment-callback refused a notification (bad signature, unknown order...).
 * - OutboxAgeMs (Milliseconds): outbox-drain, age of an order.paid event when it reached the bus.
 * - OutboxDelivered / OutboxDeliveryFailed (Count): outbox-drain, per event.
 * - ReconcileQueryFailed / ReconcileSettled (Count): reconciler, a channel query that failed / an order it
 *   settled (a callback that never came).
 * - OrdersPaid (Count): settlement, per order paid.
 * lib/platform/observability/metrics.ts publishes every point under `service` (POWERTOOLS_SERVICE_NAME, the function's
 * name) alone as well as under its own dimensions (reason, provider, route...). Alarms and the dashboard read
 * those totals through Metrics Insights, `SELECT SUM(name) FROM SCHEMA("<namespace>", service)`: exactly
 * the `service`-only series, summed over whichever functions emit the metric, each point counted once
 * whatever other dimensions the emitter adds.
 */
export const BUSINESS_METRICS = {
  callbacksRefused: 'CallbacksRefused',
  outboxAgeMs: 'OutboxAgeMs',
  outboxDelivered: 'OutboxDelivered',
  outboxDeliveryFailed: 'OutboxDeliveryFailed',
  reconcileQueryFailed: 'ReconcileQueryFailed',
  reconcileSettled: 'ReconcileSettled',
  ordersPaid: 'OrdersPaid',
} as const;

/** The Powertools variables every function carries (Logger, Metrics, Tracer read them). */
export const OBSERVABILITY_VARIABLES = [
  'POWERTOOLS_SERVICE_NAME',
  'POWERTOOLS_METRICS_NAMESPACE',
  'POWERTOOLS_TRACE_ENABLED',
  'POWERTOOLS_TRACER_CAPTURE_RESPONSE',
  'POWERTOOLS_TRACER_CAPTURE_ERROR',
  'POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS',
] as const;

/** One namespace per stage, so dev and prod in one account never mix their figures or alarms. */
export function metricsNamespaceOf(stackName: string): string {
  return stackName;
}

const FIVE_MINUTES = Duration.minutes(5);
const CLOUDWATCH = 'cloudwatch.amazonaws.com';

/** The thresholds, named so docs/DEPLOYMENT.md and the tests read the same figures. */
export const ALARM_THRESHOLDS = {
  /** Percent of API requests answered 5xx in 5 minutes (a 5xx is a bug), counted from this many requests. */
  apiServerErrorPercent: 1,
  apiServerErrorMinRequests: 10,
  /** p99 latency of the API in ms, over 3 consecutive 5-minute periods. */
  apiLatencyP99Ms: 3000,
  apiLatencyPeriods: 3,
  /** 5xx answers of the payment callback URL in 5 minutes: every one is a notification the channel retries. */
  callbackServerErrors: 1,
  /** Throttled invocations of one function in 5 minutes. */
  functionThrottles: 1,
  /** A function's longest run in 5 minutes, as a share of its timeout. */
  durationOfTimeout: 0.8,
  /** Throttled DynamoDB requests in 5 minutes. */
  tableThrottles: 1,
  /** Messages waiting in the outbox dead-letter queue. */
  deadLetters: 1,
  /** Age in ms of order.paid when delivered, and of the oldest stream record the drain is reading. */
  outboxAgeMs: 5 * 60_000,
  /** Callbacks refused in 15 minutes: a few are probes or stale retries; more is an attack or a key mix-up. */
  callbacksRefused: 20,
  callbacksRefusedPeriod: Duration.minutes(15),
  /** Failed reconciler runs in 5 minutes. */
  workerErrors: 1,
} as const;

// The operations the service sends to its table (lib/platform/db/table.ts) plus the stream reads of the drain.
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.GET_RECORDS,
];

export interface OperationsProps {
  config: StageConfig;
  /** The API groups' functions by name. */
  functions: Record<string, ServiceFunction>;
  workers: Workers;
  apiStage: HttpStage;
  /** The function behind the payment notify URL. */
  callbackFunction: ServiceFunction;
  table: Table;
}

export class Operations extends Construct {
  readonly alarmTopic: Topic;
  readonly dashboard: Dashboard;
  /** Every alarm by its short name (the suffix of its alarm name). */
  readonly alarms: Record<string, Alarm> = {};
  readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { config } = props;
    const stack = Stack.of(this);
    this.metricsNamespace = metricsNamespaceOf(stack.stackName);
    const allFunctions: Record<string, ServiceFunction> = {
      ...props.functions,
      ...props.workers.functions,
    };

    for (const [name, fn] of Object.entries(allFunctions)) {
      this.observe(name, fn, config.infra.tracing);
    }

    this.alarmTopic = this.createTopic(config);
    const thresholds = ALARM_THRESHOLDS;

    // API Gateway: HTTP APIs publish per stage ($default). HTTP APIs have no X-Ray integration; traces
    // start at the functions.
    const apiRequests = props.apiStage.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const apiErrors = props.apiStage.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const apiErrorPercent = new MathExpression({
      expression: `IF(requests >= ${thresholds.apiServerErrorMinRequests}, 100 * errors / requests, 0)`,
      usingMetrics: { requests: apiRequests, errors: apiErrors },
      period: FIVE_MINUTES,
      label: 'API 5xx %',
    });
    this.alarm('api-5xx-rate', apiErrorPercent, thresholds.apiServerErrorPercent, {
      description: `More than ${thresholds.apiServerErrorPercent}% of API requests answered 5xx in 5 minutes.`,
    });
    const apiLatency = props.apiStage.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' });
    this.alarm('api-latency-p99', apiLatency, thresholds.apiLatencyP99Ms, {
      periods: thresholds.apiLatencyPeriods,
      description: `API p99 latency at or above ${thresholds.apiLatencyP99Ms} ms for 15 minutes.`,
    });

    const callbackFn = props.callbackFunction.fn;
    const callback5xx = callbackFn.metric('Url5xxCount', { period: FIVE_MINUTES, statistic: 'Sum' });
    this.alarm('callback-url-5xx', callback5xx, thresholds.callbackServerErrors, {
      description: 'The payment callback function URL answered 5xx; the channel will retry the notification.',
    });

    for (const [name, fn] of Object.entries(allFunctions)) {
      const throttles = fn.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' });
      this.alarm(`${name}-throttles`, throttles, thresholds.functionThrottles, {
        description: `Invocations of ${name} were throttled (reserved or account concurrency reached).`,
      });
      const timeoutMs = (fn.fn.timeout ?? Duration.seconds(3)).toMilliseconds();
      const duration = fn.fn.metricDuration({ period: FIVE_MINUTES, statistic: 'Maximum' });
      this.alarm(
        `${name}-duration-near-timeout`,
        duration,
        Math.round(timeoutMs * thresholds.durationOfTimeout),
        {
          description: `A run of ${name} took ${thresholds.durationOfTimeout * 100}% or more of its ${timeoutMs} ms timeout.`,
        },
      );
    }

    const tableThrottles = props.table.metricThrottledRequestsForOperations({
      operations: TABLE_OPERATIONS,
      period: FIVE_MINUTES,
    });
    this.alarm('table-throttles', tableThrottles, thresholds.tableThrottles, {
      description: 'DynamoDB throttled requests to the table.',
    });

    const deadLetters = props.workers.outboxDeadLetters.metricApproximateNumberOfMessagesVisible({
      period: FIVE_MINUTES,
      statistic: 'Maximum',
    });
    this.alarm('outbox-dead-letters', deadLetters, thresholds.deadLetters, {
      description: 'order.paid events the drain gave up on wait in the outbox dead-letter queue.',
    });

    const outboxAge = this.insights('MAX', BUSINESS_METRICS.outboxAgeMs, FIVE_MINUTES, 'Outbox age (ms)');
    this.alarm('outbox-age', outboxAge, thresholds.outboxAgeMs, {
      description: 'order.paid reached the bus 5 minutes or more after the payment was settled.',
    });
    const drainFn = props.workers.functions['outbox-drain'].fn;
    const iteratorAge = drainFn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum' });
    this.alarm('outbox-stream-lag', iteratorAge, thresholds.outboxAgeMs, {
      description: 'The drain is 5 minutes or more behind the table stream (stuck, failing or throttled).',
    });

    const refused = this.insights(
      'SUM',
      BUSINESS_METRICS.callbacksRefused,
      thresholds.callbacksRefusedPeriod,
      'Callbacks refused',
    );
    this.alarm('callbacks-refused', refused, thresholds.callbacksRefused, {
      description: `${thresholds.callbacksRefused} or more payment callbacks refused in 15 minutes.`,
    });

    const reconcilerErrors = props.workers.functions.reconciler.fn.metricErrors({
      period: FIVE_MINUTES,
      statistic: 'Sum',
    });
    this.alarm('reconciler-errors', reconcilerErrors, thresholds.workerErrors, {
      description: 'A reconciler run failed as a whole (one channel failing is counted, not thrown).',
    });

    this.dashboard = this.createDashboard({
      apiRequests,
      apiErrors,
      apiErrorPercent,
      apiLatency,
      callbackFn: props.callbackFunction,
      allFunctions,
      tableThrottles,
      deadLetters,
      outboxAge,
      iteratorAge,
      refused,
    });
    new CfnOutput(stack, 'DashboardUrl', {
      value: `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards/dashboard/${this.dashboard.dashboardName}`,
      description: 'CloudWatch dashboard of the service (docs/DEPLOYMENT.md "Operating it")',
    });
    new CfnOutput(stack, 'AlarmTopicArn', {
      value: this.alarmTopic.topicArn,
      description: 'SNS topic every alarm notifies (subscribe more endpoints here)',
    });
  }

  /** Powertools settings and, where the stage traces, X-Ray on one function. */
  private observe(name: string, fn: ServiceFunction, tracing: boolean): void {
    fn.fn.addEnvironment('POWERTOOLS_SERVICE_NAME', name);
    fn.fn.addEnvironment('POWERTOOLS_METRICS_NAMESPACE', this.metricsNamespace);
    fn.fn.addEnvironment('POWERTOOLS_TRACE_ENABLED', String(tracing));
    // Responses carry session tokens and payment details: never into a trace. Errors carry no secret
    // (docs/CONTRIBUTING.md); outgoing HTTPS calls (the channels) are traced as subsegments.
    fn.fn.addEnvironment('POWERTOOLS_TRACER_CAPTURE_RESPONSE', 'false');
    fn.fn.addEnvironment('POWERTOOLS_TRACER_CAPTURE_ERROR', 'true');
    fn.fn.addEnvironment('POWERTOOLS_TRACER_CAPTURE_HTTPS_REQUESTS', 'true');
    if (!tracing) return;
    // ServiceFunction builds the function; its tracing mode is set on the CloudFormation resource.
    (fn.fn.node.defaultChild as CfnFunction).tracingConfig = { mode: Tracing.ACTIVE };
    fn.role.addToPolicy(
      new PolicyStatement({
        actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
        resources: ['*'],
      }),
    );
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
    });
  }

  /** The topic every alarm notifies, encrypted with a key CloudWatch may use, and TLS-only. */
  private createTopic(config: StageConfig): Topic {
    const key = new Key(this, 'AlarmsKey', {
      description: `Encrypts the alarm notifications of the ${config.stage} service`,
      enableKeyRotation: true,
      // It protects notifications in flight only: a throw-away stage lets it go with the stack.
      removalPolicy: config.infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            principals: [new AccountRootPrincipal()],
            actions: KEY_POLICY_ACTIONS,
            resources: ['*'],
          }),
          // CloudWatch publishes this stack's alarms into the encrypted topic: the two actions the SNS guide
          // names for AWS services publishing to encrypted topics (GenerateDataKey* as it writes it).
          new PolicyStatement({
            principals: [new ServicePrincipal(CLOUDWATCH)],
            actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            resources: ['*'],
            conditions: this.fromOwnAlarms(),
          }),
        ],
      }),
    });
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `${Stack.of(this).stackName} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    // The topic policy CDK writes (TLS only) replaces SNS's default one, so CloudWatch is allowed by name.
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal(CLOUDWATCH)],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: this.fromOwnAlarms(),
      }),
    );
    if (config.infra.alarmEmail) topic.addSubscription(new EmailSubscription(config.infra.alarmEmail));
    return topic;
  }

  /** Only on behalf of this stack's alarms (no confused deputy). */
  private fromOwnAlarms(): Record<string, Record<string, string>> {
    const stackName = Stack.of(this).stackName;
    return {
      StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
      ArnLike: {
        'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${stackName}-*`,
      },
    };
  }

  /** A Metrics Insights query over the per-service totals of one business metric (BUSINESS_METRICS). */
  private insights(fn: 'SUM' | 'MAX', metricName: string, period: Duration, label: string): MathExpression {
    return new MathExpression({
      expression: `SELECT ${fn}(${metricName}) FROM SCHEMA("${this.metricsNamespace}", service)`,
      usingMetrics: {},
      period,
      label,
    });
  }

  /** An alarm at or above the threshold, notifying the topic when it fires and when it clears. */
  private alarm(
    name: string,
    metric: IMetric,
    threshold: number,
    options: { description: string; periods?: number },
  ): Alarm {
    const alarm = new Alarm(this, `Alarm-${name}`, {
      alarmName: `${Stack.of(this).stackName}-${name}`,
      alarmDescription: `${options.description} See docs/DEPLOYMENT.md "Operating it".`,
      metric,
      threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: options.periods ?? 1,
      // Most figures exist only when something happens (no 5xx, no throttle: no data point).
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms[name] = alarm;
    return alarm;
  }

  private createDashboard(figures: {
    apiRequests: Metric;
    apiErrors: Metric;
    apiErrorPercent: MathExpression;
    apiLatency: Metric;
    callbackFn: ServiceFunction;
    allFunctions: Record<string, ServiceFunction>;
    tableThrottles: IMetric;
    deadLetters: Metric;
    outboxAge: MathExpression;
    iteratorAge: Metric;
    refused: MathExpression;
  }): Dashboard {
    const stackName = Stack.of(this).stackName;
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: stackName,
      defaultInterval: Duration.hours(6),
    });
    const threshold = (value: number, label: string): HorizontalAnnotation => ({ value, label });
    const t = ALARM_THRESHOLDS;
    const callback = figures.callbackFn.fn;
    const functions = Object.entries(figures.allFunctions);
    const width = 8;
    const business = (name: string, stat: 'SUM' | 'MAX', label: string) =>
      this.insights(stat, name, FIVE_MINUTES, label);

    dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${stackName}\nAlarms and what to do about each: docs/DEPLOYMENT.md "Operating it".`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 24, height: 4 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'API requests and 5xx',
        left: [figures.apiRequests],
        right: [figures.apiErrors],
        width,
      }),
      new GraphWidget({
        title: 'API 5xx rate (%)',
        left: [figures.apiErrorPercent],
        leftAnnotations: [threshold(t.apiServerErrorPercent, 'alarm')],
        width,
      }),
      new GraphWidget({
        title: 'API latency p99 (ms)',
        left: [figures.apiLatency],
        leftAnnotations: [threshold(t.apiLatencyP99Ms, 'alarm')],
        width,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Payment callback URL',
        left: ['UrlRequestCount', 'Url4xxCount', 'Url5xxCount'].map((name) =>
          callback.metric(name, { period: FIVE_MINUTES, statistic: 'Sum' }),
        ),
        width,
      }),
      new GraphWidget({
        title: 'Callbacks refused (15 min)',
        left: [figures.refused],
        leftAnnotations: [threshold(t.callbacksRefused, 'alarm')],
        width,
      }),
      new GraphWidget({
        title: 'Orders paid and reconciliation',
        left: [
          business(BUSINESS_METRICS.ordersPaid, 'SUM', 'Orders paid'),
          business(BUSINESS_METRICS.reconcileSettled, 'SUM', 'Settled by reconciliation'),
          business(BUSINESS_METRICS.reconcileQueryFailed, 'SUM', 'Reconcile queries failed'),
        ],
        width,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Throttles per function',
        left: functions.map(([name, fn]) =>
          fn.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: name }),
        ),
        width,
      }),
      new GraphWidget({
        title: 'Longest run as % of timeout',
        left: functions.map(([name, fn], index) => {
          const timeoutMs = (fn.fn.timeout ?? Duration.seconds(3)).toMilliseconds();
          return new MathExpression({
            expression: `100 * d${index} / ${timeoutMs}`,
            usingMetrics: {
              [`d${index}`]: fn.fn.metricDuration({ period: FIVE_MINUTES, statistic: 'Maximum' }),
            },
            period: FIVE_MINUTES,
            label: name,
          });
        }),
        leftAnnotations: [threshold(t.durationOfTimeout * 100, 'alarm')],
        width,
      }),
      new GraphWidget({
        title: 'DynamoDB throttled requests',
        left: [figures.tableThrottles],
        width,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Outbox age and stream lag (ms)',
        left: [figures.outboxAge, figures.iteratorAge],
        leftAnnotations: [threshold(t.outboxAgeMs, 'alarm')],
        width,
      }),
      new GraphWidget({
        title: 'Outbox deliveries',
        left: [
          business(BUSINESS_METRICS.outboxDelivered, 'SUM', 'Delivered'),
          business(BUSINESS_METRICS.outboxDeliveryFailed, 'SUM', 'Delivery failed'),
        ],
        width,
      }),
      new GraphWidget({
        title: 'Outbox dead-letter queue',
        left: [figures.deadLetters],
        leftAnnotations: [threshold(t.deadLetters, 'alarm')],
        width,
      }),
    );
    return dashboard;
  }
}
