// What tells the operator the bill is running (docs/DESIGN.md 23, docs/DEPLOYMENT.md "Cost guardrails"): the
// monthly AWS Budget with its actual and forecast alerts, the alarms on estimated charges, CDN bytes and
// requests, render invocations and the bucket's size, all to the alarm topic, and the X-Ray sampling rule
// that bounds what traces cost.
import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import { CfnBudget } from 'aws-cdk-lib/aws-budgets';
import type { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import { type IMetric, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import type { Construct } from 'constructs';
import { CERTIFICATE_REGION } from './infra-settings.ts';
import type { ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';

/** Billing and CloudFront publish their metrics in us-east-1 only (CloudFront's under `Region: Global`). */
export const GLOBAL_METRICS_REGION = CERTIFICATE_REGION;

const HOUR = Duration.hours(1);
const figure = (value: number) => value.toLocaleString('en-US');

export interface CostAlarmProps {
  config: StageConfig;
  topic: Topic;
  render: ServiceFunction;
  bucket: Bucket;
  distribution: Distribution;
  /** Operations' alarm (infra/operations.ts): at or above the threshold, notifying the topic. */
  alarm: (name: string, metric: IMetric, threshold: number, options: { description: string }) => unknown;
}

/** Built in the Operations construct's scope, beside its alarms. */
export function addCostAlarms(scope: Construct, props: CostAlarmProps): void {
  const { infra } = props.config;
  if (infra.budget) addBudget(scope, props.topic, infra.budget);
  if (infra.tracing) addSamplingRule(scope, infra.xraySamplingPercent);
  const thresholds = infra.costAlarms;
  if (!thresholds) return;

  const renders = props.render.fn.metricInvocations({ period: HOUR, statistic: 'Sum' });
  props.alarm('render-invocations', renders, thresholds.renderInvocationsPerHour, {
    description: `The render function ran ${figure(thresholds.renderInvocationsPerHour)} times or more in an hour.`,
  });
  // S3 publishes a bucket's size once a day; everything the service stores is Standard.
  const stored = new Metric({
    namespace: 'AWS/S3',
    metricName: 'BucketSizeBytes',
    dimensionsMap: { BucketName: props.bucket.bucketName, StorageType: 'StandardStorage' },
    statistic: 'Maximum',
    period: Duration.days(1),
  });
  props.alarm('bucket-size', stored, thresholds.bucketBytes, {
    description: `The files bucket holds ${figure(thresholds.bucketBytes)} bytes or more (noncurrent versions included).`,
  });

  // An alarm watches metrics of its own region only: elsewhere these two cannot exist (docs/DEPLOYMENT.md).
  if (infra.region !== GLOBAL_METRICS_REGION) {
    Annotations.of(scope).addWarningV2(
      'service:cost-alarms-outside-us-east-1',
      `The billing and CDN alarms need a stack in ${GLOBAL_METRICS_REGION}, where AWS publishes those metrics; ` +
        `this stage ${infra.region ? `deploys to ${infra.region}` : 'pins no region'} and has neither ` +
        '(the budget still alerts; docs/DEPLOYMENT.md "Cost guardrails")',
    );
    return;
  }
  const global = (
    namespace: string,
    metricName: string,
    dimensionsMap: Record<string, string>,
    period = HOUR,
  ) =>
    new Metric({
      namespace,
      metricName,
      dimensionsMap,
      period,
      statistic: 'Sum',
      region: GLOBAL_METRICS_REGION,
    });
  // Month to date, updated a few times a day.
  const charges = global('AWS/Billing', 'EstimatedCharges', { Currency: 'USD' }, Duration.hours(6)).with({
    statistic: 'Maximum',
  });
  props.alarm('estimated-charges', charges, thresholds.billingUsd, {
    description: `The month's estimated charges reached $${figure(thresholds.billingUsd)} (needs billing alerts on).`,
  });
  const cdn = { DistributionId: props.distribution.distributionId, Region: 'Global' };
  props.alarm('cdn-bytes', global('AWS/CloudFront', 'BytesDownloaded', cdn), thresholds.cdnBytesPerHour, {
    description: `The CDN sent ${figure(thresholds.cdnBytesPerHour)} bytes or more to viewers in an hour.`,
  });
  props.alarm('cdn-requests', global('AWS/CloudFront', 'Requests', cdn), thresholds.cdnRequestsPerHour, {
    description: `The CDN answered ${figure(thresholds.cdnRequestsPerHour)} requests or more in an hour.`,
  });
}

/** The month's cost of the whole account (the prod account holds this stage alone). */
function addBudget(
  scope: Construct,
  topic: Topic,
  budget: NonNullable<StageConfig['infra']['budget']>,
): void {
  const alert = (notificationType: 'ACTUAL' | 'FORECASTED') => (threshold: number) => ({
    notification: {
      notificationType,
      comparisonOperator: 'GREATER_THAN',
      threshold,
      thresholdType: 'PERCENTAGE',
    },
    subscribers: [{ subscriptionType: 'SNS', address: topic.topicArn }],
  });
  const cfn = new CfnBudget(scope, 'Budget', {
    budget: {
      budgetName: `${Stack.of(scope).stackName}-monthly`,
      budgetType: 'COST',
      timeUnit: 'MONTHLY',
      budgetLimit: { amount: budget.monthlyUsd, unit: 'USD' },
    },
    notificationsWithSubscribers: [
      ...budget.actualPercent.map(alert('ACTUAL')),
      ...budget.forecastPercent.map(alert('FORECASTED')),
    ],
  });
  // Budgets publishes into the topic once its policy lets it.
  cfn.node.addDependency(topic);
}

/**
 * X-Ray records this share of the stage's requests (and one a second). Lambda documents its own sampling as
 * one request a second and 5 % of the rest, and applies the rule where it asks X-Ray for the decision
 * (docs/DEPLOYMENT.md "Cost guardrails").
 */
function addSamplingRule(scope: Construct, percent: number): void {
  const stackName = Stack.of(scope).stackName;
  new CfnSamplingRule(scope, 'SamplingRule', {
    samplingRule: {
      ruleName: stackName.slice(0, 32),
      priority: 1000,
      fixedRate: percent / 100,
      reservoirSize: 1,
      serviceName: `${stackName}-*`,
      serviceType: '*',
      host: '*',
      httpMethod: '*',
      urlPath: '*',
      resourceArn: '*',
      version: 1,
    },
  });
}
