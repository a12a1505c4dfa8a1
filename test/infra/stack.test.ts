// Template checks of the ServiceStack (bundling skipped): routes, functions, storage, CDN, IAM and cdk-nag.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Token } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { GROUP_NEEDS } from '../../functions/needs.ts';
import { buildServiceApp, SERVICE_NAME } from '../../infra/service-app.ts';
import { PROJECT_ROOT } from '../../infra/service-function.ts';
import {
  IMAGE_KEY_FUNCTION,
  IMAGE_PATH_PATTERN,
  NONCURRENT_VERSION_EXPIRY_DAYS,
  PENDING_UPLOAD_PREFIX,
  type ServiceStack,
  VIEWER_ADDRESS_FUNCTION,
} from '../../infra/stack.ts';
import { loadStageConfig, StageConfigError, stageConfigFrom } from '../../infra/stage-config.ts';
import { loadConfig } from '../../lib/config/load.ts';
import { createTableInput, TABLE } from '../../lib/db/table.ts';
import {
  DEFAULT_ROUTE_GROUP,
  FUNCTION_GROUPS,
  type FunctionGroup,
  ROUTES,
  routeKeyOf,
} from '../../lib/routes.ts';
import { deployedVariablesOf } from '../../lib/wiring/needs.ts';

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation JSON, read by shape in each test
type Json = Record<string, any>;

// The CLI hands the app cdk.json's context (feature flags); tests do the same so both synthesize alike.
const CDK_CONTEXT = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Json;

interface Synth {
  app: App;
  stack: ServiceStack;
  nag: AwsSolutionsChecks;
  template: Template;
  resources: Record<string, Json>;
}

function synth(options: Parameters<typeof buildServiceApp>[0]): Synth {
  const built = buildServiceApp({ ...options, context: CDK_CONTEXT, bundling: false });
  // Template.fromStack synthesizes, which runs the cdk-nag plugin: an unacknowledged finding throws here.
  const template = Template.fromStack(built.stack);
  return { ...built, template, resources: template.toJSON().Resources as Record<string, Json> };
}

function resourcesOf(s: Synth, type: string): Array<[string, Json]> {
  return Object.entries(s.resources).filter(([, resource]) => resource.Type === type);
}

function functionIdOf(s: Synth, group: FunctionGroup): string {
  return s.stack.getLogicalId(s.stack.functions[group].fn.node.defaultChild as CfnFunction);
}

function functionOf(s: Synth, group: FunctionGroup): Json {
  return s.resources[functionIdOf(s, group)]!.Properties;
}

/** Every Allow statement of the role's inline and attached policies. */
function roleStatements(s: Synth, group: FunctionGroup): Json[] {
  const roleId = s.stack.getLogicalId(s.stack.functions[group].role.node.defaultChild as never);
  return resourcesOf(s, 'AWS::IAM::Policy')
    .filter(([, policy]) => policy.Properties.Roles.some((role: Json) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[]);
}

function actionsOf(statements: Json[]): string[] {
  return statements.flatMap((statement) => [statement.Action].flat() as string[]);
}

function appConfigOf(s: Synth, group: FunctionGroup) {
  const env = functionOf(s, group).Environment.Variables as Json;
  return loadConfig({ env: { APP_CONFIG_JSON: env.APP_CONFIG_JSON } });
}

const readStageFile = (stage: string): Json =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, `infra/config/${stage}.json`), 'utf8'));

const PROD_FILE = readStageFile('prod');
const DEV_FILE = readStageFile('dev');
const PROD_ACCOUNT = '123456789012';
const PROD_REGION = 'eu-west-1';
const CERTIFICATE_ARN = `arn:aws:acm:us-east-1:${PROD_ACCOUNT}:certificate/0f8fad5b-d9cb-469f-a165-70867728950e`;

/** prod.json as an operator completes it before the first deploy (docs/DEPLOYMENT.md). */
function completedProd(overrides: { mail?: Json; infra?: Json } = {}): Json {
  return {
    ...PROD_FILE,
    mail: { from: 'no-reply@mail.example.com', ...overrides.mail },
    infra: { ...PROD_FILE.infra, account: PROD_ACCOUNT, region: PROD_REGION, ...overrides.infra },
  };
}

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synth({ config: stageConfigFrom('prod', completedProd()) });
}, 60_000);

describe('HTTP API', () => {
  it('has exactly the routes of lib/routes.ts plus $default, each on its group function', () => {
    const groupByFunctionId = new Map(FUNCTION_GROUPS.map((group) => [functionIdOf(dev, group), group]));
    const groupByIntegration = new Map(
      resourcesOf(dev, 'AWS::ApiGatewayV2::Integration').map(([id, integration]) => {
        const functionId = integration.Properties.IntegrationUri['Fn::GetAtt'][0] as string;
        return [id, groupByFunctionId.get(functionId)];
      }),
    );
    const actual = resourcesOf(dev, 'AWS::ApiGatewayV2::Route')
      .map(([, route]) => {
        const integrationId = route.Properties.Target['Fn::Join'][1][1].Ref as string;
        return `${route.Properties.RouteKey} -> ${groupByIntegration.get(integrationId)}`;
      })
      .sort();
    const expected = [
      ...ROUTES.map((route) => `${routeKeyOf(route)} -> ${route.group}`),
      `$default -> ${DEFAULT_ROUTE_GROUP}`,
    ].sort();

    expect(actual).toEqual(expected);
  });

  it('throttles the default stage and writes access logs', () => {
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] } },
    });
  });

  it('allows CORS only from the configured origins', () => {
    dev.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: { AllowOrigins: ['http://localhost:5173'] },
    });
    const [[, prodApi]] = resourcesOf(prod, 'AWS::ApiGatewayV2::Api') as [[string, Json]];
    expect(prodApi.Properties.CorsConfiguration).toBeUndefined();
  });
});

describe('functions', () => {
  it('run nodejs22.x on arm64 with an explicit log group that has a retention', () => {
    for (const group of FUNCTION_GROUPS) {
      const fn = functionOf(dev, group);
      expect(fn.Runtime, group).toBe('nodejs22.x');
      expect(fn.Architectures, group).toEqual(['arm64']);
      const logGroupId = fn.LoggingConfig.LogGroup.Ref as string;
      expect(dev.resources[logGroupId]!.Properties.RetentionInDays, group).toBe(30);
    }
  });

  it('give the password-hashing auth function at least 1024 MB and the others 256 to 512', () => {
    expect(functionOf(dev, 'auth').MemorySize).toBeGreaterThanOrEqual(1024);
    for (const group of FUNCTION_GROUPS.filter((name) => name !== 'auth')) {
      expect(functionOf(dev, group).MemorySize, group).toBeGreaterThanOrEqual(256);
      expect(functionOf(dev, group).MemorySize, group).toBeLessThanOrEqual(512);
    }
  });

  it('carry exactly the variables their needs imply, and the files function no table', () => {
    for (const group of FUNCTION_GROUPS) {
      const env = Object.keys(functionOf(dev, group).Environment.Variables as Json).sort();
      expect(env, group).toEqual([...deployedVariablesOf(GROUP_NEEDS[group]), 'NODE_OPTIONS'].sort());
    }
    expect(functionOf(dev, 'files').Environment.Variables.TABLE_NAME).toBeUndefined();
    expect(functionOf(dev, 'upload').Environment.Variables.MASTER_KEY__PROVIDER).toBe('kms');
  });

  it('receive the stage config and the deployment-owned settings', () => {
    const config = appConfigOf(dev, 'payments');
    expect(config.stage).toBe('dev');
    expect(config.payment.mock.enabled).toBe(true);
    const env = functionOf(dev, 'payments').Environment.Variables as Json;
    expect(Object.keys(env)).toEqual(
      expect.arrayContaining([
        'TABLE_NAME',
        'MASTER_KEY__PROVIDER',
        'MASTER_KEY__KMS_KEY_ID',
        'AWS__EVENT_BUS_NAME',
        'BASE_URL',
        'PAYMENT__NOTIFY_BASE_URL',
      ]),
    );
    expect(JSON.parse(env.APP_CONFIG_JSON)).not.toHaveProperty('infra');
  });

  it('expose the payment callback through a function URL without auth, given to payments as notify base', () => {
    const [[urlId, url]] = resourcesOf(dev, 'AWS::Lambda::Url') as [[string, Json]];
    expect(url.Properties.AuthType).toBe('NONE');
    expect(url.Properties.TargetFunctionArn).toEqual({
      'Fn::GetAtt': [functionIdOf(dev, 'payment-callback'), 'Arn'],
    });

    const notify = JSON.stringify(functionOf(dev, 'payments').Environment.Variables.PAYMENT__NOTIFY_BASE_URL);
    expect(notify).toContain(urlId);
  });
});

describe('storage', () => {
  it('builds the table from lib/db/table.ts with on-demand billing, TTL and point-in-time recovery', () => {
    const expected = createTableInput('unused');
    const [[, table]] = resourcesOf(dev, 'AWS::DynamoDB::Table') as [[string, Json]];
    const props = table.Properties;
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.KeySchema).toEqual(expected.KeySchema);
    expect(new Set(props.AttributeDefinitions)).toEqual(new Set(expected.AttributeDefinitions));
    expect(
      props.GlobalSecondaryIndexes.map((index: Json) => ({
        IndexName: index.IndexName,
        KeySchema: index.KeySchema,
        Projection: index.Projection,
      })),
    ).toEqual(expected.GlobalSecondaryIndexes);
    expect(props.TimeToLiveSpecification).toEqual({ AttributeName: TABLE.ttlAttribute, Enabled: true });
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('rotates the master key', () => {
    dev.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('keeps the files bucket private, encrypted, TLS-only, and expires abandoned uploads', () => {
    const filesId = dev.stack.getLogicalId(dev.stack.bucket.node.defaultChild as never);
    const bucket = dev.resources[filesId]!.Properties;
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(
      bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault,
    ).toEqual({
      SSEAlgorithm: 'AES256',
    });
    expect(bucket.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Prefix: PENDING_UPLOAD_PREFIX, ExpirationInDays: 1 }),
      ]),
    );
    expect(bucket.CorsConfiguration.CorsRules[0]).toMatchObject({
      AllowedMethods: ['PUT'],
      AllowedOrigins: ['http://localhost:5173'],
    });
    const [, policy] = resourcesOf(dev, 'AWS::S3::BucketPolicy').find(
      ([, candidate]) => candidate.Properties.Bucket.Ref === filesId,
    )!;
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
  });
});

describe('CDN', () => {
  it('serves /i/* from the bucket through origin access control, with a long-lived cache', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const images = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );
    const origin = config.Origins.find((candidate: Json) => candidate.Id === images.TargetOriginId);
    expect(origin.S3OriginConfig).toBeDefined();
    expect(origin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Id'] });
    const cachePolicy = dev.resources[images.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
    expect(cachePolicy.DefaultTTL).toBeGreaterThanOrEqual(30 * 24 * 3600);
    dev.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 's3', SigningBehavior: 'always' },
    });
  });

  it('maps /i/<key> to the object key at the edge and refuses anything that is not an image key', () => {
    const handler = new Function(`${IMAGE_KEY_FUNCTION}; return handler;`)() as (event: Json) => Json;
    const viewerRequest = (uri: string) => handler({ request: { uri } });

    expect(viewerRequest('/i/2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e.png')).toEqual({
      uri: '/2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e.png',
    });
    for (const uri of ['/i/', '/i/incoming/2026/11/21/x.png', '/i/2026/11/21/a/b.png', '/i/../secret']) {
      expect(viewerRequest(uri).statusCode, uri).toBe(404);
    }
  });

  it('sends everything else to the API uncached, with every viewer header but Host', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const origin = config.Origins.find(
      (candidate: Json) => candidate.Id === config.DefaultCacheBehavior.TargetOriginId,
    );
    expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(config.DefaultCacheBehavior.CachePolicyId).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
    expect(config.DefaultCacheBehavior.OriginRequestPolicyId).toBe(
      OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
    );
    expect(config.DefaultCacheBehavior.AllowedMethods).toHaveLength(7);
  });

  it('names the viewer address to the API, proven by an origin secret only auth and payments hold', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const apiOrigin = config.Origins.find(
      (candidate: Json) => candidate.Id === config.DefaultCacheBehavior.TargetOriginId,
    );
    const proof = apiOrigin.OriginCustomHeaders.find(
      (header: Json) => header.HeaderName === 'x-origin-verify',
    );
    // The stack's own UUID: from its id, in no file.
    expect(proof.HeaderValue).toEqual({
      'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }],
    });
    for (const group of FUNCTION_GROUPS) {
      const secret = functionOf(dev, group).Environment.Variables.HTTP__TRUSTED_PROXY_SECRET;
      if (group === 'auth' || group === 'payments') expect(secret, group).toEqual(proof.HeaderValue);
      else expect(secret, group).toBeUndefined();
    }

    const association = (config.DefaultCacheBehavior.FunctionAssociations as Json[])[0]!;
    expect(association.EventType).toBe('viewer-request');
    const [functionId] = association.FunctionARN['Fn::GetAtt'] as [string];
    expect(dev.resources[functionId]!.Properties.FunctionCode).toBe(VIEWER_ADDRESS_FUNCTION);
    // The edge code overwrites whatever the client sent.
    const handler = new Function(`${VIEWER_ADDRESS_FUNCTION}; return handler;`)() as (event: Json) => Json;
    const forged = {
      request: { headers: { 'x-viewer-address': { value: '10.0.0.1' } } },
      viewer: { ip: '203.0.113.9' },
    };
    expect(handler(forged).headers['x-viewer-address']).toEqual({ value: '203.0.113.9' });
  });

  it('gives the CloudFront address to the functions as BASE_URL', () => {
    const [[cdnId]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(dev, group).Environment.Variables.BASE_URL, group).toEqual({
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [cdnId, 'DomainName'] }]],
      });
    }
  });
});

describe('least privilege', () => {
  it('has no IAM statement that allows a wildcard action', () => {
    const documents = Object.values(dev.resources).flatMap((resource) => {
      const props = resource.Properties ?? {};
      return [
        props.PolicyDocument,
        props.KeyPolicy,
        ...(props.Policies ?? []).map((p: Json) => p.PolicyDocument),
      ];
    });
    const wildcards = documents
      .filter(Boolean)
      .flatMap((document: Json) => document.Statement as Json[])
      // Deny statements (enforceSSL's s3:*) only take rights away.
      .filter((statement) => statement.Effect === 'Allow')
      .flatMap((statement) => [statement.Action].flat() as string[])
      .filter((action) => action === '*' || action.endsWith(':*'));

    expect(wildcards).toEqual([]);
  });

  it('grants each function only what its group declares it needs', () => {
    const has = (group: FunctionGroup, prefix: string) =>
      actionsOf(roleStatements(dev, group)).some((action) => action.startsWith(prefix));
    for (const group of FUNCTION_GROUPS) {
      const grants = GROUP_NEEDS[group];
      expect(has(group, 'dynamodb:GetItem'), group).toBe(grants.table !== undefined);
      expect(has(group, 'dynamodb:PutItem'), group).toBe(grants.table === 'readwrite');
      expect(has(group, 's3:GetObject'), group).toBe(grants.bucket !== undefined);
      expect(has(group, 's3:PutObject'), group).toBe(grants.bucket === 'readwrite');
      expect(has(group, 'kms:'), group).toBe(grants.masterKey === true);
      expect(has(group, 'events:PutEvents'), group).toBe(grants.events === true);
      expect(has(group, 'cloudfront:'), group).toBe(grants.cdn === true);
      // dev has no mail.from: mail goes to the log and nobody may send through SES.
      expect(has(group, 'ses:'), group).toBe(false);
    }
    expect(
      actionsOf(roleStatements(dev, 'auth'))
        .filter((action) => action.startsWith('kms:'))
        .sort(),
    ).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
  });

  it('lets the upload function invalidate in its own distribution only, and names it', () => {
    const [[cdnId]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const cloudfront = roleStatements(dev, 'upload').filter((statement) =>
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
    expect(functionOf(dev, 'upload').Environment.Variables.CDN__DISTRIBUTION_ID).toEqual({ Ref: cdnId });
  });

  it('lets auth send mail as the configured SES identity only', () => {
    const withMail = synth({
      config: stageConfigFrom('dev', { ...DEV_FILE, mail: { from: 'no-reply@mail.example.com' } }),
    });

    const ses = roleStatements(withMail, 'auth').filter((statement) =>
      String(statement.Action).includes('ses:'),
    );
    expect(ses).toHaveLength(1);
    expect(JSON.stringify(ses[0]!.Resource)).toContain(':identity/mail.example.com');
    for (const group of FUNCTION_GROUPS.filter((name) => name !== 'auth')) {
      expect(
        actionsOf(roleStatements(withMail, group)).some((action) => action.startsWith('ses:')),
        group,
      ).toBe(false);
    }
  }, 30_000);
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the AwsSolutions pack', () => {
    const report = dev.nag.validateScope(dev.app);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(prod.nag.validateScope(prod.app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  it('still reports a finding nobody acknowledged', () => {
    const { app, stack, nag } = buildServiceApp({ stage: 'dev', context: CDK_CONTEXT, bundling: false });
    new Bucket(stack, 'Unchecked');

    const rules = nag.validateScope(app).violations.map((violation) => violation.ruleName);

    expect(rules).toEqual(expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']));
  });
});

describe('prod stage', () => {
  it('turns the mock payment gateway off in every function', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(appConfigOf(prod, group).payment.mock.enabled, group).toBe(false);
    }
  });

  it('retains the table with deletion protection, and the bucket and key', () => {
    prod.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { DeletionProtectionEnabled: true },
    });
    prod.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
    const filesId = prod.stack.getLogicalId(prod.stack.bucket.node.defaultChild as never);
    expect(prod.resources[filesId]!.DeletionPolicy).toBe('Retain');
  });

  it('lets dev data go with the stack', () => {
    dev.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    const [[, table]] = resourcesOf(dev, 'AWS::DynamoDB::Table') as [[string, Json]];
    expect(table.Properties.DeletionProtectionEnabled).toBe(false);
  });
});

describe('stage config', () => {
  it('loads the local and dev stage files', () => {
    for (const stage of ['local', 'dev']) {
      expect(loadStageConfig(stage, PROJECT_ROOT).stage).toBe(stage);
    }
  });

  it('refuses the committed prod file until its account, region and sender are filled in', () => {
    const attempt = () => loadStageConfig('prod', PROJECT_ROOT);

    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/mail\.from[\s\S]*infra\.account[\s\S]*infra\.region/);
  });

  it('refuses settings the deployment owns and unknown infra keys, naming each', () => {
    const attempt = () =>
      stageConfigFrom('dev', {
        table_name: 'mine',
        master_key: { provider: 'local' },
        infra: { colour: 'red' },
      });

    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/table_name[\s\S]*master_key[\s\S]*infra/);
  });

  it('keeps the embedded base_url and the infra section away from the functions', () => {
    const config = loadStageConfig('local', PROJECT_ROOT);

    expect(config.appConfig).not.toHaveProperty('base_url');
    expect(config.appConfig).not.toHaveProperty('infra');
    expect(config.secretKeys).toEqual(
      expect.arrayContaining(['admin.bootstrap.password', 'upload.api_token']),
    );
  });
});

describe('production guards', () => {
  const prodSynth = (raw: Json) => () => synth({ config: stageConfigFrom('prod', raw) });

  it('pins the prod stack to its account and region; dev stays environment-agnostic', () => {
    expect(prod.stack.account).toBe(PROD_ACCOUNT);
    expect(prod.stack.region).toBe(PROD_REGION);
    expect(Token.isUnresolved(dev.stack.account)).toBe(true);
    expect(Token.isUnresolved(dev.stack.region)).toBe(true);
  });

  it('refuses a prod stage without mail.from, since codes would go to the logs', () => {
    const { mail: _mail, ...withoutMail } = completedProd();

    expect(prodSynth(withoutMail)).toThrow(StageConfigError);
    expect(prodSynth(withoutMail)).toThrow(/mail\.from: a prod stage must send mail through SES/);
  });

  it('refuses a prod stage with the mock cashier on', () => {
    const withMock = { ...completedProd(), payment: { ...PROD_FILE.payment, mock: { enabled: true } } };

    expect(prodSynth(withMock)).toThrow(/payment\.mock\.enabled: must be false in a prod stage/);
  });

  it('refuses a prod stage without a pinned 12-digit account', () => {
    const withoutAccount = completedProd({ infra: { account: undefined } });
    const shortAccount = completedProd({ infra: { account: '12345' } });

    expect(prodSynth(withoutAccount)).toThrow(
      /infra\.account: a prod stage must pin the 12-digit AWS account/,
    );
    expect(prodSynth(shortAccount)).toThrow(/infra\.account: must be a 12-digit AWS account id/);
  });

  it('refuses a prod stage without a pinned region', () => {
    const withoutRegion = completedProd({ infra: { region: undefined } });

    expect(prodSynth(withoutRegion)).toThrow(/infra\.region: a prod stage must pin the AWS region/);
  });

  it('refuses a prod stage with a CORS origin that is not https, naming it', () => {
    const plainHttp = completedProd({
      infra: { cors_origins: ['https://app.example.com', 'http://app.example.com'] },
    });

    expect(prodSynth(plainHttp)).toThrow(
      /infra\.cors_origins: a prod stage allows https origins only, not http:\/\/app\.example\.com$/m,
    );
  });

  it('names every prod problem at once', () => {
    const everythingWrong = {
      ...PROD_FILE,
      payment: { ...PROD_FILE.payment, mock: { enabled: true } },
      infra: { ...PROD_FILE.infra, cors_origins: ['http://localhost:5173'] },
    };

    let message = '';
    try {
      prodSynth(everythingWrong)();
    } catch (error) {
      message = (error as Error).message;
    }

    for (const setting of [
      'mail.from',
      'payment.mock.enabled',
      'infra.account',
      'infra.region',
      'infra.cors_origins',
    ]) {
      expect(message, setting).toContain(`  - ${setting}: `);
    }
  });

  it('applies none of the prod guards to other stages', () => {
    expect(stageConfigFrom('dev', DEV_FILE).stage).toBe('dev');
  });
});

describe('custom domain', () => {
  const DOMAIN = 'api.example.com';
  const ZONE_ID = 'Z0123456789ABCDEFGHIJ';
  let withZone: Synth;
  let withoutZone: Synth;

  beforeAll(() => {
    withZone = synth({
      config: stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: {
          ...DEV_FILE.infra,
          domain_name: DOMAIN,
          certificate_arn: CERTIFICATE_ARN,
          hosted_zone_id: ZONE_ID,
        },
      }),
    });
    // The prod shape with a domain: cdk-nag must accept it without the default-certificate acknowledgement.
    withoutZone = synth({
      config: stageConfigFrom(
        'prod',
        completedProd({ infra: { domain_name: DOMAIN, certificate_arn: CERTIFICATE_ARN } }),
      ),
    });
  }, 60_000);

  const distributionConfigOf = (s: Synth): Json =>
    (resourcesOf(s, 'AWS::CloudFront::Distribution')[0]![1] as Json).Properties.DistributionConfig;

  it('gives the distribution the alias, the certificate and TLS 1.2 (2021) at least', () => {
    for (const s of [withZone, withoutZone]) {
      const config = distributionConfigOf(s);
      expect(config.Aliases).toEqual([DOMAIN]);
      expect(config.ViewerCertificate).toEqual({
        AcmCertificateArn: CERTIFICATE_ARN,
        MinimumProtocolVersion: 'TLSv1.2_2021',
        SslSupportMethod: 'sni-only',
      });
    }
    expect(distributionConfigOf(dev).Aliases).toBeUndefined();
  });

  it('gives https://<domain_name> to the functions as BASE_URL, unless infra.base_url says otherwise', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(withZone, group).Environment.Variables.BASE_URL, group).toBe(`https://${DOMAIN}`);
    }
    const explicit = stageConfigFrom('dev', {
      ...DEV_FILE,
      infra: {
        ...DEV_FILE.infra,
        domain_name: DOMAIN,
        certificate_arn: CERTIFICATE_ARN,
        base_url: 'https://x.example.com',
      },
    });
    expect(explicit.infra.baseUrl).toBe('https://x.example.com');
  });

  it('adds the Route 53 alias records only when a hosted zone is named', () => {
    const [[cdnId]] = resourcesOf(withZone, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const records = resourcesOf(withZone, 'AWS::Route53::RecordSet').map(([, record]) => record.Properties);

    expect(records.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of records) {
      expect(record.Name).toBe(`${DOMAIN}.`);
      expect(record.HostedZoneId).toBe(ZONE_ID);
      expect(record.AliasTarget.DNSName).toEqual({ 'Fn::GetAtt': [cdnId, 'DomainName'] });
    }
    expect(resourcesOf(withoutZone, 'AWS::Route53::RecordSet')).toEqual([]);
    expect(resourcesOf(dev, 'AWS::Route53::RecordSet')).toEqual([]);
  });

  it('passes cdk-nag with the custom certificate and no default-certificate acknowledgement', () => {
    expect(withZone.nag.validateScope(withZone.app).violations.map((v) => v.ruleName)).toEqual([]);
    expect(withoutZone.nag.validateScope(withoutZone.app).violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('refuses a domain without a certificate and a certificate without a domain, naming both', () => {
    for (const half of [{ domain_name: DOMAIN }, { certificate_arn: CERTIFICATE_ARN }]) {
      const attempt = () => stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, ...half } });
      expect(attempt).toThrow(StageConfigError);
      expect(attempt).toThrow(/infra\.domain_name and infra\.certificate_arn: set both or neither/);
    }
  });

  it('refuses a certificate outside us-east-1 and a hosted zone without a domain', () => {
    const attempt = () =>
      stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: {
          ...DEV_FILE.infra,
          domain_name: DOMAIN,
          certificate_arn: CERTIFICATE_ARN.replace('us-east-1', 'eu-west-1'),
        },
      });
    expect(attempt).toThrow(/infra\.certificate_arn: must be a certificate in us-east-1/);
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, hosted_zone_id: ZONE_ID } }),
    ).toThrow(/infra\.hosted_zone_id: needs infra\.domain_name/);
  });
});

describe('HSTS', () => {
  it('sends strict-transport-security for a year with subdomains on the API and the images behaviour', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const images = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );

    for (const [name, behavior] of [
      ['default', config.DefaultCacheBehavior],
      [IMAGE_PATH_PATTERN, images],
    ] as const) {
      const policyId = behavior.ResponseHeadersPolicyId.Ref as string;
      const headers = dev.resources[policyId]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
      expect(headers.StrictTransportSecurity, name).toEqual({
        AccessControlMaxAgeSec: 365 * 24 * 3600,
        IncludeSubdomains: true,
        Override: true,
      });
      // What the managed SECURITY_HEADERS policy gave the user-supplied images.
      expect(headers.ContentTypeOptions, name).toEqual({ Override: true });
    }
  });
});

describe('data safety', () => {
  const filesOf = (s: Synth): Json =>
    s.resources[s.stack.getLogicalId(s.stack.bucket.node.defaultChild as never)]!;

  it('versions the retained files bucket and expires old versions after 30 days', () => {
    const bucket = filesOf(prod).Properties;

    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          NoncurrentVersionExpiration: { NoncurrentDays: NONCURRENT_VERSION_EXPIRY_DAYS },
        }),
      ]),
    );
    expect(NONCURRENT_VERSION_EXPIRY_DAYS).toBe(30);
  });

  it('keeps dev buckets unversioned and empties them on destroy; prod buckets are never emptied', () => {
    expect(filesOf(dev).Properties.VersioningConfiguration).toBeUndefined();
    const emptied = (s: Synth) =>
      resourcesOf(s, 'Custom::S3AutoDeleteObjects')
        .map(([, resource]) => resource.Properties.BucketName.Ref)
        .sort();
    const bucketIds = resourcesOf(dev, 'AWS::S3::Bucket')
      .map(([id]) => id)
      .sort();

    expect(bucketIds).toHaveLength(2);
    expect(emptied(dev)).toEqual(bucketIds);
    expect(emptied(prod)).toEqual([]);
  });

  it('names the master key alias/<service>-<stage>-master', () => {
    for (const [s, stage] of [
      [dev, 'dev'],
      [prod, 'prod'],
    ] as const) {
      const keyId = s.stack.getLogicalId(s.stack.masterKey.node.defaultChild as never);
      s.template.hasResourceProperties('AWS::KMS::Alias', {
        AliasName: `alias/${SERVICE_NAME}-${stage}-master`,
        TargetKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
      });
    }
  });
});
