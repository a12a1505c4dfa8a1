// The service in one stack: composes the data, the API, the CDN (with the console), the workers and
// operations, hands each function the resources its group needs, and names the stack's outputs.
import { Annotations, Arn, ArnFormat, Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { HttpApi, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { ServiceApi } from './api.ts';
import { createDistribution } from './cdn.ts';
import { CONSOLE_BUILD_DIR } from './console.ts';
import { ServiceData } from './data.ts';
import { takedownDenyList } from './edge.ts';
import { Operations } from './operations.ts';
import type { NeedResources, ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';
import { bannedAddressSets } from './waf.ts';
import { Workers } from './workers.ts';

export interface ServiceStackProps extends StackProps {
  config: StageConfig;
  /** The web console build (default CONSOLE_BUILD_DIR): deployed under console/ when it holds index.html. */
  consoleDir?: string;
}

/**
 * The parts build their resources in this stack's own scope (not in a construct of their own), so every
 * logical id stays as deployed and a deployed stack updates in place.
 */
export class ServiceStack extends Stack {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly masterKey: Key;
  readonly eventBus: EventBus;
  readonly functions: Record<FunctionGroup, ServiceFunction>;
  readonly api: HttpApi;
  readonly apiStage: HttpStage;
  readonly distribution: Distribution;
  /** The CDN's proof to the API (lib/http/front-door.ts); see ServiceData.originSecret. */
  readonly originSecret: Secret;
  readonly callbackUrl: FunctionUrl;
  /** The outbox drain and the reconciler, with their stream, queue, archive and schedule. */
  readonly workers: Workers;
  /** Alarms, their topic, the dashboard, tracing (docs/DEPLOYMENT.md "Operating it"). */
  readonly operations: Operations;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    const { config } = props;
    const { infra } = config;

    for (const key of config.secretKeys) {
      Annotations.of(this).addWarningV2(
        'service:secret-in-stage-config',
        `${key} is set in the ${config.stage} config and will be readable in the Lambda environment`,
      );
    }

    const data = new ServiceData(this, config);
    ({
      table: this.table,
      bucket: this.bucket,
      masterKey: this.masterKey,
      originSecret: this.originSecret,
      eventBus: this.eventBus,
    } = data);

    const api = new ServiceApi(this, config);
    ({ functions: this.functions, callbackUrl: this.callbackUrl, api: this.api, stage: this.apiStage } = api);

    this.distribution = createDistribution(this, {
      config,
      api: this.api,
      originSecret: this.originSecret,
      bucket: this.bucket,
      logBucket: data.accessLogs,
      consoleDir: props.consoleDir ?? CONSOLE_BUILD_DIR,
    });
    const baseUrl =
      infra.baseUrl ??
      (infra.domain ? `https://${infra.domain.name}` : `https://${this.distribution.distributionDomainName}`);

    const resources: NeedResources = {
      accessLogs: data.accessLogs,
      table: this.table,
      bucket: this.bucket,
      masterKey: this.masterKey,
      eventBus: this.eventBus,
      distribution: this.distribution,
      denyList: takedownDenyList(this),
      mailIdentityArn: this.mailIdentityArn(config),
      // The sets the web ACL's first rule blocks (infra/waf.ts): only where this stack makes that ACL.
      ...(infra.waf ? { bannedAddressSets: bannedAddressSets(this) } : {}),
      originSecret: this.originSecret,
      notifyBaseUrl: api.notifyBaseUrl,
      baseUrl,
    };
    api.applyNeeds(resources);

    this.workers = new Workers(this, 'Workers', {
      config,
      table: this.table,
      eventBus: this.eventBus,
      resources,
    });
    this.operations = new Operations(this, 'Operations', {
      config,
      functions: this.functions,
      workers: this.workers,
      apiStage: this.apiStage,
      table: this.table,
      bucket: this.bucket,
      distribution: this.distribution,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.apiStage.url, description: 'HTTP API (behind the CDN)' });
    new CfnOutput(this, 'BaseUrl', { value: baseUrl, description: 'Public address (base_url)' });
    new CfnOutput(this, 'CallbackFunctionUrl', {
      value: this.callbackUrl.url,
      description: 'Payment notify address (payment.notify_base_url)',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'EventBusName', { value: this.eventBus.eventBusName });
    new CfnOutput(this, 'DistributionId', { value: this.distribution.distributionId });
  }

  /** The SES identity mail is sent as: infra.mail_identity, else the domain of mail.from; none: mail is logged. */
  private mailIdentityArn(config: StageConfig): string | undefined {
    const from = config.settings.mail.from;
    const identity = config.infra.mailIdentity ?? from?.slice(from.lastIndexOf('@') + 1);
    if (!identity) return undefined;
    return Arn.format(
      {
        service: 'ses',
        region: config.settings.mail.ses_region ?? Aws.REGION,
        resource: 'identity',
        resourceName: identity,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      this,
    );
  }
}
