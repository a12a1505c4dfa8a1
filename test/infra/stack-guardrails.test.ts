// Template checks of prod's cost guardrails (docs/DESIGN.md 23, docs/DEPLOYMENT.md "Cost guardrails"): the
// budget with its actual and forecast alerts, the billing, CDN, render and bucket alarms, the WAF with its
// per-address rate rules on the distribution, the render route's own throttle, X-Ray sampling and the
// logging that keeps a request to one line; what a prod stage outside us-east-1 gets; and that dev and
// local have none of it.
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { PER_ADDRESS_LIMITS, prodRenderThrottle, WAF_WINDOW_SECONDS } from '#infra/capacity.ts';
import { loadStageConfig, StageConfigError, stageConfigFrom } from '#infra/stage-config.ts';
import {
  completedProd,
  distributionConfigOf,
  functionIdOf,
  functionOf,
  type Json,
  logicalIdOf,
  PROD_ACCOUNT,
  PROD_FILE,
  resourcesOf,
  type Synth,
  synth,
} from './stack-helpers.ts';

const WEB_ACL_ARN = `arn:aws:wafv2:us-east-1:${PROD_ACCOUNT}:global/webacl/edge/0f8fad5b-d9cb-469f-a165-70867728950e`;
const ALARMS = PROD_FILE.infra.cost_alarms as Json;

let dev: Synth;
let prod: Synth;
/** A prod stage in another region, with a web ACL made in us-east-1 apart. */
let elsewhere: Synth;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synth({ config: stageConfigFrom('prod', completedProd()) });
  elsewhere = synth({
    config: stageConfigFrom(
      'prod',
      completedProd({ infra: { region: 'eu-west-1', web_acl_arn: WEB_ACL_ARN } }),
    ),
  });
}, 120_000);

const stageOf = (s: Synth) => resourcesOf(s, 'AWS::ApiGatewayV2::Stage')[0]![1] as Json;
const topicIdOf = (s: Synth) => logicalIdOf(s, s.stack.operations.alarmTopic);

/** The alarm named `<stack>-<name>`, if there is one. */
function alarmOf(s: Synth, name: string): Json | undefined {
  const found = resourcesOf(s, 'AWS::CloudWatch::Alarm').filter(
    ([, resource]) => resource.Properties.AlarmName === `${s.stack.stackName}-${name}`,
  );
  expect(found.length, name).toBeLessThanOrEqual(1);
  return found[0]?.[1].Properties;
}

const COST_ALARMS = ['estimated-charges', 'cdn-bytes', 'cdn-requests', 'render-invocations', 'bucket-size'];

describe('the budget', () => {
  it('alerts the alarm topic on the actual spend at 80 % and 100 % and on the forecast at 100 %', () => {
    const [[id, budget], ...others] = resourcesOf(prod, 'AWS::Budgets::Budget') as [[string, Json]];
    expect(others).toEqual([]);
    expect(budget.Properties.Budget).toMatchObject({
      BudgetType: 'COST',
      TimeUnit: 'MONTHLY',
      BudgetLimit: { Amount: PROD_FILE.infra.budget.monthly_usd, Unit: 'USD' },
    });
    const alerts = (budget.Properties.NotificationsWithSubscribers as Json[]).map((alert) => [
      alert.Notification.NotificationType,
      alert.Notification.Threshold,
      alert.Notification.ThresholdType,
      alert.Subscribers,
    ]);
    const subscribers = [{ SubscriptionType: 'SNS', Address: { Ref: topicIdOf(prod) } }];
    expect(alerts).toEqual([
      ['ACTUAL', 80, 'PERCENTAGE', subscribers],
      ['ACTUAL', 100, 'PERCENTAGE', subscribers],
      ['FORECASTED', 100, 'PERCENTAGE', subscribers],
    ]);
    // Created once the topic's policy lets Budgets publish.
    expect(prod.resources[id]!.DependsOn).toEqual(expect.arrayContaining([topicIdOf(prod)]));
  });

  it("lets this account's budgets publish to the topic and use its key, and only where there is a budget", () => {
    const budgetsStatement = expect.objectContaining({
      Effect: 'Allow',
      Principal: { Service: 'budgets.amazonaws.com' },
      Condition: expect.objectContaining({
        StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      }),
    });
    const statements = (s: Synth, type: string, property: string) =>
      resourcesOf(s, type).flatMap(([, resource]) => resource.Properties[property].Statement as Json[]);

    const topicStatements = statements(prod, 'AWS::SNS::TopicPolicy', 'PolicyDocument');
    expect(topicStatements).toContainEqual(budgetsStatement);
    const publish = topicStatements.find(
      (statement) => statement.Principal?.Service === 'budgets.amazonaws.com',
    );
    expect(publish!.Action).toBe('sns:Publish');
    expect(JSON.stringify(publish!.Condition.ArnLike)).toContain(':budgets::');
    const [[, topic]] = resourcesOf(prod, 'AWS::SNS::Topic') as [[string, Json]];
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    expect(prod.resources[keyId]!.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'budgets.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    expect(statements(dev, 'AWS::SNS::TopicPolicy', 'PolicyDocument')).not.toContainEqual(budgetsStatement);
  });

  it('is required of a prod stage, which may say false; its percents are checked', () => {
    const { budget: _budget, cost_alarms: _alarms, ...infra } = completedProd().infra;
    const attempt = () => stageConfigFrom('prod', { ...completedProd(), infra });
    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(
      /infra\.budget: a prod stage states[\s\S]*infra\.cost_alarms: a prod stage alarms/,
    );
    const without = stageConfigFrom('prod', completedProd({ infra: { budget: false, cost_alarms: false } }));
    expect(without.infra.budget).toBeUndefined();
    expect(without.infra.costAlarms).toBeUndefined();
    expect(() =>
      stageConfigFrom(
        'prod',
        completedProd({ infra: { budget: { monthly_usd: 500, actual_percent: [0] } } }),
      ),
    ).toThrow(/infra\.budget/);
  });
});

describe('the cost alarms', () => {
  it('watch the estimated charges in us-east-1, every 6 hours, at the billing threshold', () => {
    expect(alarmOf(prod, 'estimated-charges')).toMatchObject({
      Namespace: 'AWS/Billing',
      MetricName: 'EstimatedCharges',
      Dimensions: [{ Name: 'Currency', Value: 'USD' }],
      Statistic: 'Maximum',
      Period: 6 * 3600,
      Threshold: ALARMS.billing_usd,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it("watch the CDN's bytes to viewers and its requests per hour, under Region: Global", () => {
    const cdn = [
      { Name: 'DistributionId', Value: { Ref: logicalIdOf(prod, prod.stack.distribution) } },
      { Name: 'Region', Value: 'Global' },
    ];
    for (const [name, metric, threshold] of [
      ['cdn-bytes', 'BytesDownloaded', ALARMS.cdn_bytes_per_hour],
      ['cdn-requests', 'Requests', ALARMS.cdn_requests_per_hour],
    ])
      expect(alarmOf(prod, name), name).toMatchObject({
        Namespace: 'AWS/CloudFront',
        MetricName: metric,
        Dimensions: cdn,
        Statistic: 'Sum',
        Period: 3600,
        Threshold: threshold,
      });
  });

  it("watch the render function's invocations per hour and the bucket's daily size", () => {
    expect(alarmOf(prod, 'render-invocations')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionIdOf(prod, 'render') } }],
      Statistic: 'Sum',
      Period: 3600,
      Threshold: ALARMS.render_invocations_per_hour,
    });
    expect(alarmOf(prod, 'bucket-size')).toMatchObject({
      Namespace: 'AWS/S3',
      MetricName: 'BucketSizeBytes',
      Dimensions: expect.arrayContaining([
        { Name: 'BucketName', Value: { Ref: logicalIdOf(prod, prod.stack.bucket) } },
        { Name: 'StorageType', Value: 'StandardStorage' },
      ]),
      Period: 86_400,
      Threshold: ALARMS.bucket_bytes,
    });
  });

  it('notify the alarm topic when they fire and when they clear', () => {
    for (const name of COST_ALARMS) {
      const props = alarmOf(prod, name)!;
      expect(props.AlarmActions, name).toEqual([{ Ref: topicIdOf(prod) }]);
      expect(props.OKActions, name).toEqual([{ Ref: topicIdOf(prod) }]);
    }
  });

  it('outside us-east-1 keep the regional ones and say at synth that the billing and CDN ones cannot exist', () => {
    expect(resourcesOf(elsewhere, 'AWS::Budgets::Budget')).toHaveLength(1);
    expect(alarmOf(elsewhere, 'render-invocations')).toBeDefined();
    expect(alarmOf(elsewhere, 'bucket-size')).toBeDefined();
    for (const name of ['estimated-charges', 'cdn-bytes', 'cdn-requests'])
      expect(alarmOf(elsewhere, name), name).toBeUndefined();
    const warnings = elsewhere.app
      .synth()
      .getStackByName(elsewhere.stack.stackName)
      .messages.map((message) => String(message.entry.data));
    expect(warnings.some((text) => /billing and CDN alarms need a stack in us-east-1/.test(text))).toBe(true);
  });
});

describe('the WAF', () => {
  const aclOf = (s: Synth) => resourcesOf(s, 'AWS::WAFv2::WebACL') as Array<[string, Json]>;
  const rulesOf = (s: Synth) =>
    Object.fromEntries((aclOf(s)[0]![1].Properties.Rules as Json[]).map((rule) => [rule.Name, rule]));

  it('is on the prod distribution by default: a CLOUDFRONT-scoped ACL of per-address rate rules', () => {
    const [[aclId, acl], ...others] = aclOf(prod) as [[string, Json], ...Array<[string, Json]>];
    expect(others).toEqual([]);
    expect(acl.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(distributionConfigOf(prod).WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const rules = rulesOf(prod);
    const limits: Record<string, number> = {
      'rate-per-address': PER_ADDRESS_LIMITS.all,
      'renders-per-address': PER_ADDRESS_LIMITS.renders,
      'originals-per-address': PER_ADDRESS_LIMITS.originals,
      'codes-per-address': PER_ADDRESS_LIMITS.codes,
    };
    expect(Object.keys(rules).sort()).toEqual([...Object.keys(limits), 'banned-addresses'].sort());
    for (const [name, limit] of Object.entries(limits)) {
      expect(rules[name]!.Action, name).toEqual({ Block: {} });
      expect(rules[name]!.Statement.RateBasedStatement, name).toMatchObject({
        AggregateKeyType: 'IP',
        Limit: limit,
        EvaluationWindowSec: WAF_WINDOW_SECONDS,
      });
    }
    // The rule on every request counts every request.
    expect(rules['rate-per-address']!.Statement.RateBasedStatement.ScopeDownStatement).toBeUndefined();
  });

  it('counts renders, originals and code requests apart, a rendition being a query naming its parameters', () => {
    const rules = rulesOf(prod);
    const scope = (name: string) => rules[name]!.Statement.RateBasedStatement.ScopeDownStatement as Json;
    const [imagePath, rendition] = scope('renders-per-address').AndStatement.Statements as Json[];
    expect(imagePath!.ByteMatchStatement).toMatchObject({
      SearchString: '/i/',
      PositionalConstraint: 'STARTS_WITH',
    });
    const query = new RegExp(rendition!.RegexMatchStatement.RegexString);
    for (const named of ['p=thumb', 'p=thumb&f=auto', 'w=480&q=75&f=webp', 'fbclid=x&w=960'])
      expect(query.test(named), named).toBe(true);
    for (const other of ['', 'fbclid=x', 'v=2', 'utm_source=mail&ref=a', 'pw=1'])
      expect(query.test(other), other).toBe(false);
    expect(scope('originals-per-address').AndStatement.Statements).toEqual([
      imagePath,
      { NotStatement: { Statement: rendition } },
    ]);
    expect(JSON.stringify(scope('codes-per-address'))).toContain('"SearchString":"/code"');
    expect(JSON.stringify(scope('codes-per-address'))).toContain('"SearchString":"POST"');
  });

  it('takes its limits from the stage, and false turns it off', () => {
    const tuned = stageConfigFrom(
      'prod',
      completedProd({ infra: { waf: { rate_limit: 2000, original_rate_limit: 50 } } }),
    );
    expect(tuned.infra.waf).toEqual({ ...PER_ADDRESS_LIMITS, all: 2000, originals: 50 });
    expect(stageConfigFrom('prod', completedProd({ infra: { waf: false } })).infra.waf).toBeUndefined();
  });

  it('needs infra.web_acl_arn (or false) in a prod stage outside us-east-1, where it is attached by ARN', () => {
    expect(() => stageConfigFrom('prod', completedProd({ infra: { region: 'eu-west-1' } }))).toThrow(
      /infra\.waf: a CloudFront web ACL can only be created in us-east-1, and this stage deploys to eu-west-1; .*infra\.web_acl_arn.*infra\.waf: false/,
    );
    expect(
      stageConfigFrom('prod', completedProd({ infra: { region: 'eu-west-1', waf: false } })).infra.waf,
    ).toBeUndefined();
    expect(aclOf(elsewhere)).toEqual([]);
    expect(distributionConfigOf(elsewhere).WebACLId).toBe(WEB_ACL_ARN);
  });
});

describe('the render route, traces and logs', () => {
  it('throttles the render route on its own, inside the stage throttle, at the model rate', () => {
    const { rateLimit, burstLimit } = prodRenderThrottle();
    const stage = stageOf(prod);
    expect(stage.Properties.RouteSettings).toEqual({
      'GET /i/{key+}': { ThrottlingRateLimit: rateLimit, ThrottlingBurstLimit: burstLimit },
    });
    expect(rateLimit).toBeLessThan(stage.Properties.DefaultRouteSettings.ThrottlingRateLimit);
    // The route exists before the stage names it.
    const routeId = resourcesOf(prod, 'AWS::ApiGatewayV2::Route').find(
      ([, route]) => route.Properties.RouteKey === 'GET /i/{key+}',
    )![0];
    expect(stage.DependsOn).toContain(routeId);
  });

  it("samples 5 % of the stage functions' requests with X-Ray", () => {
    const [[, rule], ...others] = resourcesOf(prod, 'AWS::XRay::SamplingRule') as [[string, Json]];
    expect(others).toEqual([]);
    expect(rule.Properties.SamplingRule).toMatchObject({
      FixedRate: 0.05,
      ReservoirSize: 1,
      ServiceName: `${prod.stack.stackName}-*`,
      Version: 1,
    });
    expect(functionOf(prod, 'render').TracingConfig).toEqual({ Mode: 'Active' });
    const tuned = stageConfigFrom('prod', completedProd({ infra: { xray_sampling_percent: 1 } }));
    expect(tuned.infra.xraySamplingPercent).toBe(1);
  });

  it("drops Lambda's START, END and REPORT lines and API Gateway's access log in prod", () => {
    expect(functionOf(prod, 'render').LoggingConfig).toMatchObject({
      LogFormat: 'JSON',
      SystemLogLevel: 'WARN',
      // Lambda filters none of the service's lines (its log.level does): EMF documents carry no level.
      ApplicationLogLevel: 'TRACE',
    });
    expect(stageOf(prod).Properties.AccessLogSettings).toBeUndefined();
    expect(resourcesOf(prod, 'AWS::Logs::LogGroup').map(([id]) => id)).not.toContain(
      expect.stringMatching(/^ApiAccessLogs/),
    );
  });
});

describe('dev and local, as a newcomer finds them', () => {
  it('have no budget, WAF, cost alarm, render throttle or sampling rule, and keep every log line', () => {
    const local = synth({ config: loadStageConfig('local', PROJECT_ROOT) });
    for (const s of [dev, local]) {
      const stage = s.stack.stackName;
      for (const type of ['AWS::Budgets::Budget', 'AWS::WAFv2::WebACL', 'AWS::XRay::SamplingRule'])
        expect(resourcesOf(s, type), `${stage} ${type}`).toEqual([]);
      for (const name of COST_ALARMS) expect(alarmOf(s, name), `${stage} ${name}`).toBeUndefined();
      expect(distributionConfigOf(s).WebACLId, stage).toBeUndefined();
      expect(stageOf(s).Properties.RouteSettings, stage).toBeUndefined();
      expect(stageOf(s).Properties.AccessLogSettings, stage).toBeDefined();
      expect(functionOf(s, 'render').LoggingConfig, stage).toEqual({
        LogFormat: 'Text',
        LogGroup: expect.anything(),
      });
    }
  }, 60_000);

  it('find nothing unacknowledged by cdk-nag in prod, in either region', () => {
    for (const s of [prod, elsewhere])
      expect(s.nag.validateScope(s.app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
