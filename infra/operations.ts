// Operating the service (docs/DESIGN.md 14, docs/DEPLOYMENT.md "Operating it"): tracing and the Powertools
// settings on every function and the alarms; their topic and the dashboard are built in this construct's scope.
import { Aws, CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import {
  Alarm,
  ComparisonOperator,
  type Dashboard,
  type IMetric,
  MathExpression,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { type CfnFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { createAlarmTopic } from './alarm-topic.ts';
import { addCostAlarms } from './cost-alarms.ts';
import { createDashboard } from './dashboard.ts';
import { ALARM_THRESHOLDS, BUSINESS_METRICS, FIVE_MINUTES, insightsQuery } from './operations-metrics.ts';
import type { ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';
import type { Workers } from './workers.ts';

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
  /** The API groups' functions by name (`payment-callback` is the one behind the payment notify URL). */
  functions: Record<FunctionGroup, ServiceFunction>;
  workers: Workers;
  apiStage: HttpStage;
  table: Table;
  /** What the cost alarms watch (infra/cost-alarms.ts). */
  bucket: Bucket;
  distribution: Distribution;
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
    // One namespace per stage (the stack's name), so dev and prod in one account never mix their figures.
    this.metricsNamespace = stack.stackName;
    const allFunctions: Record<string, ServiceFunction> = { ...props.functions, ...props.workers.functions };

    for (const [name, fn] of Object.entries(allFunctions)) this.observe(name, fn, config.infra.tracing);

    this.alarmTopic = createAlarmTopic(this, config);
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

    const callbackFn = props.functions['payment-callback'];
    const callback5xx = callbackFn.fn.metric('Url5xxCount', { period: FIVE_MINUTES, statistic: 'Sum' });
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

    addCostAlarms(this, {
      config,
      topic: this.alarmTopic,
      render: props.functions.render,
      bucket: props.bucket,
      distribution: props.distribution,
      alarm: (name, metric, threshold, options) => this.alarm(name, metric, threshold, options),
    });

    this.dashboard = createDashboard(this, {
      metricsNamespace: this.metricsNamespace,
      alarms: Object.values(this.alarms),
      apiRequests,
      apiErrors,
      apiErrorPercent,
      apiLatency,
      callbackFn,
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
    fn.allow(['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], ['*']);
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions.',
    });
  }

  /** A Metrics Insights query over the per-service totals of one business metric (BUSINESS_METRICS). */
  private insights(fn: 'SUM' | 'MAX', metricName: string, period: Duration, label: string): MathExpression {
    return insightsQuery(this.metricsNamespace, fn, metricName, period, label);
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
}
