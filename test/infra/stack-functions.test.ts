import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { GROUP_NEEDS } from '#functions/needs.ts';
import { PRODUCTION_RESERVED_CONCURRENCY } from '#infra/infra-settings.ts';
import { OBSERVABILITY_VARIABLES } from '#infra/operations-metrics.ts';
import { stageConfigFrom } from '#infra/stage-config.ts';
import { DERIVED_PREFIX } from '#lib/files/prefixes.ts';
import { RENDITION_CLAIM_PREFIX } from '#lib/files/rendition-claims.ts';
import {
  DEFAULT_ROUTE_GROUP,
  FUNCTION_GROUPS,
  type FunctionGroup,
  ROUTES,
  routeKeyOf,
} from '#lib/http/routes.ts';
import { deployedVariablesOf } from '#lib/wiring/needs.ts';
import {
  actionsOf,
  appConfigOf,
  DEV_FILE,
  functionIdOf,
  functionOf,
  type Json,
  logicalIdOf,
  resourcesOf,
  roleStatements,
  type Synth,
  synth,
  synthDevAndProd,
} from './stack-helpers.ts';

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  ({ dev, prod } = synthDevAndProd());
}, 60_000);

describe('sign-in providers (docs/DEPLOYMENT.md "Sign-in providers\' secrets")', () => {
  it("grants the accounts function GetSecretValue on the providers' secrets only, by ARN or by name", () => {
    const providers = [
      {
        id: 'sso',
        kind: 'oidc',
        label: 'SSO',
        issuer: 'https://sso.example.com',
        client_id: 'c',
        secret_id: 'svc/sso',
      },
      {
        id: 'gh',
        kind: 'github',
        label: 'GitHub',
        client_id: 'c',
        secret_id: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:gh-AbCdEf',
      },
    ];
    const s = synth({ config: stageConfigFrom('dev', { ...DEV_FILE, auth: { providers } }) });
    const resourcesFor = (group: FunctionGroup) =>
      roleStatements(s, group)
        .filter((statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'))
        .flatMap((statement) => [statement.Resource].flat())
        .map((resource) => JSON.stringify(resource));
    const accounts = resourcesFor('accounts').join('\n');
    expect(accounts).toContain('arn:aws:secretsmanager:us-east-1:123456789012:secret:gh-AbCdEf');
    expect(accounts).toContain(':secret:svc/sso-??????');
    for (const group of FUNCTION_GROUPS.filter((group) => group !== 'accounts'))
      expect(resourcesFor(group).join(), group).not.toMatch(/svc\/sso|gh-AbCdEf/);
  }, 120_000);
});

describe('HTTP API', () => {
  it('has exactly the routes of lib/http/routes.ts (but the function-URL groups) plus $default, each on its group', () => {
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

  it('serves the payment callback both at the public address (through API Gateway) and at its function URL', () => {
    const integrated = resourcesOf(dev, 'AWS::ApiGatewayV2::Integration').map(
      ([, integration]) => integration.Properties.IntegrationUri['Fn::GetAtt'][0],
    );
    expect(new Set(integrated)).toEqual(new Set(FUNCTION_GROUPS.map((g) => functionIdOf(dev, g))));
    // Every function is invoked by API Gateway through one permission (not one per route).
    for (const group of FUNCTION_GROUPS) {
      const fnId = functionIdOf(dev, group);
      const byApi = resourcesOf(dev, 'AWS::Lambda::Permission').filter(
        ([, permission]) =>
          permission.Properties.Principal === 'apigateway.amazonaws.com' &&
          JSON.stringify(permission.Properties.FunctionName).includes(fnId),
      );
      expect(byApi.length, group).toBe(1);
    }
    // The callback's function URL takes anyone (by design: signatures prove callbacks).
    const callbackId = functionIdOf(dev, 'payment-callback');
    const urls = resourcesOf(dev, 'AWS::Lambda::Url').filter(([, url]) =>
      JSON.stringify(url.Properties.TargetFunctionArn).includes(callbackId),
    );
    expect(urls.map(([, url]) => url.Properties.AuthType)).toEqual(['NONE']);
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

  it('give the password-hashing functions (accounts, shares) at least 1024 MB, render one full vCPU, the others 256 to 512', () => {
    expect(functionOf(dev, 'accounts').MemorySize).toBeGreaterThanOrEqual(1024);
    expect(functionOf(dev, 'shares').MemorySize).toBeGreaterThanOrEqual(1024);
    // libvips renders on one thread: 1,769 MB is one full vCPU, and far above its measured peak.
    expect(functionOf(dev, 'render').MemorySize).toBe(1769);
    expect(functionOf(dev, 'render').Timeout).toBe(29);
    // A share's thumbnail may be rendered through its door, under the same deadline.
    expect(functionOf(dev, 'shares').Timeout).toBe(29);
    for (const group of FUNCTION_GROUPS.filter((name) => !['accounts', 'shares', 'render'].includes(name))) {
      expect(functionOf(dev, group).MemorySize, group).toBeGreaterThanOrEqual(256);
      expect(functionOf(dev, group).MemorySize, group).toBeLessThanOrEqual(512);
    }
  });

  it('carry exactly the variables their needs imply; the meta function the table only for the bans', () => {
    for (const group of FUNCTION_GROUPS) {
      const env = Object.keys(functionOf(dev, group).Environment.Variables as Json).sort();
      expect(env, group).toEqual(
        [...deployedVariablesOf(GROUP_NEEDS[group]), ...OBSERVABILITY_VARIABLES].sort(),
      );
    }
    // Its one grant in the table is Query of the `BANS` partition (below).
    expect(functionOf(dev, 'meta').Environment.Variables.TABLE_NAME).toBeDefined();
    expect(actionsOf(roleStatements(dev, 'meta')).filter((action) => action.startsWith('dynamodb:'))).toEqual(
      ['dynamodb:Query'],
    );
    expect(functionOf(dev, 'files').Environment.Variables.MASTER_KEY__PROVIDER).toBe('kms');
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
        // payments publishes nothing itself (the outbox drain does): the bus is not among them.
        'FRONT_DOOR__PROVIDER',
        'FRONT_DOOR__SECRET_ID',
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
      const claims = 'renditionClaims' in grants && grants.renditionClaims === true;
      expect(has(group, 'dynamodb:GetItem'), group).toBe(grants.table !== undefined || claims);
      expect(has(group, 'dynamodb:PutItem'), group).toBe(grants.table === 'readwrite' || claims);
      expect(has(group, 'dynamodb:Query'), group).toBe(grants.table !== undefined || grants.bans === true);
      // Every group API Gateway reaches refuses banned viewers, so reads the bans (docs/ABUSE.md "Bans").
      expect(grants.bans === true, group).toBe(grants.frontDoor === true);
      expect(has(group, 's3:GetObject'), group).toBe(grants.bucket !== undefined);
      expect(has(group, 's3:PutObject'), group).toBe(
        grants.bucket === 'readwrite' || grants.renditions === true,
      );
      expect(has(group, 's3:DeleteObject'), group).toBe(
        grants.bucket === 'readwrite' || grants.renditions === true,
      );
      expect(has(group, 'kms:'), group).toBe(grants.masterKey === true);
      expect(has(group, 'events:PutEvents'), group).toBe(grants.events === true);
      expect(has(group, 'cloudfront:'), group).toBe(grants.cdn === true);
      expect(has(group, 'secretsmanager:'), group).toBe(grants.frontDoor === true);
      // dev has no mail.from: mail goes to the log and nobody may send through SES.
      expect(has(group, 'ses:'), group).toBe(false);
    }
    expect(
      actionsOf(roleStatements(dev, 'accounts'))
        .filter((action) => action.startsWith('kms:'))
        .sort(),
    ).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
  });

  it('lets the render function read the originals and write under derived/ only; the meta function no S3', () => {
    const bucketArn = { 'Fn::GetAtt': [logicalIdOf(dev, dev.stack.bucket), 'Arn'] };
    const objectsUnder = (prefix: string) => ({ 'Fn::Join': ['', [bucketArn, `/${prefix}*`]] });
    const s3Of = (group: FunctionGroup) =>
      roleStatements(dev, group)
        .filter((statement) => actionsOf([statement]).some((action) => action.startsWith('s3:')))
        .map(({ Action, Resource }) => ({ Action, Resource }));

    expect(s3Of('render')).toEqual([
      { Action: 's3:GetObject', Resource: objectsUnder('') },
      { Action: 's3:ListBucket', Resource: bucketArn },
      { Action: ['s3:DeleteObject', 's3:PutObject'], Resource: objectsUnder(DERIVED_PREFIX) },
    ]);
    // Nothing else: no delete outside derived/, no key; only its logs, the origin secret, and in the table
    // three item actions on its renditions' claims (`RENDITION#` partitions) and Query of the bans alone.
    const tableArn = { 'Fn::GetAtt': [logicalIdOf(dev, dev.stack.table), 'Arn'] };
    expect(
      roleStatements(dev, 'render')
        .filter((statement) => actionsOf([statement]).some((action) => action.startsWith('dynamodb:')))
        .map(({ Action, Resource, Condition }) => ({ Action, Resource, Condition })),
    ).toEqual([
      {
        Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
        Resource: tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RENDITION#*'] } },
      },
      {
        // Which mark an owner's images carry (lib/files/owner-marks.ts): their rules and their plan, read.
        Action: 'dynamodb:GetItem',
        Resource: tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['edgerules#*', 'plan#*'] } },
      },
      {
        Action: 'dynamodb:Query',
        Resource: tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['BANS'] } },
      },
    ]);
    expect(RENDITION_CLAIM_PREFIX).toBe('RENDITION#');
    expect(actionsOf(roleStatements(dev, 'render')).sort()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:DeleteObject',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
      'secretsmanager:GetSecretValue',
    ]);
    expect(DERIVED_PREFIX).toBe('derived/');
    expect(s3Of('meta')).toEqual([]);
    expect(functionOf(dev, 'meta').Environment.Variables.BUCKET_NAME).toBeUndefined();
  });

  it('lets no API function invalidate in the CDN: deletes leave it by the edge maximum age or the takedowns worker', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(actionsOf(roleStatements(dev, group)), group).not.toContain('cloudfront:CreateInvalidation');
      expect(functionOf(dev, group).Environment.Variables.CDN__DISTRIBUTION_ID, group).toBeUndefined();
    }
  });

  it('lets auth, payments (a gateway change notice, a refund) and payment-callback (a refund a channel completes) send mail as the configured SES identity only', () => {
    const withMail = synth({
      config: stageConfigFrom('dev', { ...DEV_FILE, mail: { from: 'no-reply@mail.example.com' } }),
    });

    const senders = ['accounts', 'payments', 'payment-callback'] as const;
    for (const sender of senders) {
      const ses = roleStatements(withMail, sender).filter((statement) =>
        String(statement.Action).includes('ses:'),
      );
      expect(ses, sender).toHaveLength(1);
      expect(JSON.stringify(ses[0]!.Resource), sender).toContain(':identity/mail.example.com');
    }
    for (const group of FUNCTION_GROUPS.filter((name) => !(senders as readonly string[]).includes(name))) {
      expect(
        actionsOf(roleStatements(withMail, group)).some((action) => action.startsWith('ses:')),
        group,
      ).toBe(false);
    }
  }, 30_000);
});

describe('reserved concurrency', () => {
  it('reserves the prod defaults per function and leaves dev unreserved', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(prod, group).ReservedConcurrentExecutions, group).toBe(
        PRODUCTION_RESERVED_CONCURRENCY[group],
      );
      expect(functionOf(dev, group).ReservedConcurrentExecutions, group).toBeUndefined();
    }
  });

  it('takes infra.reserved_concurrency per function from the stage file, the rest unreserved', () => {
    const small = synth({
      config: stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: { ...DEV_FILE.infra, reserved_concurrency: { accounts: 5, 'outbox-drain': 2 } },
      }),
    });
    expect(functionOf(small, 'accounts').ReservedConcurrentExecutions).toBe(5);
    expect(functionOf(small, 'files').ReservedConcurrentExecutions).toBeUndefined();
    // The workers take the same setting by their names; without an entry they run unreserved.
    const workerProps = (name: 'outbox-drain' | 'reconciler') =>
      small.resources[
        small.stack.getLogicalId(small.stack.workers.functions[name].fn.node.defaultChild as never)
      ]!.Properties;
    expect(workerProps('outbox-drain').ReservedConcurrentExecutions).toBe(2);
    expect(workerProps('reconciler').ReservedConcurrentExecutions).toBeUndefined();
  }, 30_000);
});
