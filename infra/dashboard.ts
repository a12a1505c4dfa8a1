// The one CloudWatch dashboard of a stage: the alarms' states, then the figures behind each alarm and the
// business metrics beside them, row by row (docs/DEPLOYMENT.md "Operating it").
import { Duration, Stack } from 'aws-cdk-lib';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  type Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { ALARM_THRESHOLDS, BUSINESS_METRICS, FIVE_MINUTES, insightsQuery } from './operations-metrics.ts';
import type { ServiceFunction } from './service-function.ts';

/** The figures the alarms already read, graphed as they alarm on them. */
export interface DashboardFigures {
  metricsNamespace: string;
  alarms: Alarm[];
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
}

const WIDTH = 8;

/** A graph a third of the dashboard wide, with the alarm's threshold drawn on it when there is one. */
function graph(title: string, left: IMetric[], alarmAt?: number): GraphWidget {
  return new GraphWidget({
    title,
    left,
    ...(alarmAt === undefined ? {} : { leftAnnotations: [{ value: alarmAt, label: 'alarm' }] }),
    width: WIDTH,
  });
}

/** `scope` is the Operations construct: the dashboard keeps the logical id it had inside it. */
export function createDashboard(scope: Construct, figures: DashboardFigures): Dashboard {
  const stackName = Stack.of(scope).stackName;
  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: stackName,
    defaultInterval: Duration.hours(6),
  });
  const t = ALARM_THRESHOLDS;
  const callback = figures.callbackFn.fn;
  const functions = Object.entries(figures.allFunctions);
  const business = (name: string, label: string) =>
    insightsQuery(figures.metricsNamespace, 'SUM', name, FIVE_MINUTES, label);

  dashboard.addWidgets(
    new TextWidget({
      markdown: `# ${stackName}\nAlarms and what to do about each: docs/DEPLOYMENT.md "Operating it".`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(
    new AlarmStatusWidget({ title: 'Alarms', alarms: figures.alarms, width: 24, height: 4 }),
  );
  dashboard.addWidgets(
    new GraphWidget({
      title: 'API requests and 5xx',
      left: [figures.apiRequests],
      right: [figures.apiErrors],
      width: WIDTH,
    }),
    graph('API 5xx rate (%)', [figures.apiErrorPercent], t.apiServerErrorPercent),
    graph('API latency p99 (ms)', [figures.apiLatency], t.apiLatencyP99Ms),
  );
  dashboard.addWidgets(
    graph(
      'Payment callback URL',
      ['UrlRequestCount', 'Url4xxCount', 'Url5xxCount'].map((name) =>
        callback.metric(name, { period: FIVE_MINUTES, statistic: 'Sum' }),
      ),
    ),
    graph('Callbacks refused (15 min)', [figures.refused], t.callbacksRefused),
    graph('Orders paid and reconciliation', [
      business(BUSINESS_METRICS.ordersPaid, 'Orders paid'),
      business(BUSINESS_METRICS.reconcileSettled, 'Settled by reconciliation'),
      business(BUSINESS_METRICS.reconcileQueryFailed, 'Reconcile queries failed'),
    ]),
  );
  dashboard.addWidgets(
    graph(
      'Throttles per function',
      functions.map(([name, fn]) =>
        fn.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: name }),
      ),
    ),
    graph(
      'Longest run as % of timeout',
      functions.map(([name, fn], index) => {
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
      t.durationOfTimeout * 100,
    ),
    graph('DynamoDB throttled requests', [figures.tableThrottles]),
  );
  dashboard.addWidgets(
    graph('Outbox age and stream lag (ms)', [figures.outboxAge, figures.iteratorAge], t.outboxAgeMs),
    graph('Outbox deliveries', [
      business(BUSINESS_METRICS.outboxDelivered, 'Delivered'),
      business(BUSINESS_METRICS.outboxDeliveryFailed, 'Delivery failed'),
    ]),
    graph('Outbox dead-letter queue', [figures.deadLetters], t.deadLetters),
  );
  return dashboard;
}
