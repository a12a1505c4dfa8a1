// The service in one stack: table, bucket, master key, event bus, one function per group, HTTP API, CDN.
import {
  Annotations,
  Arn,
  ArnFormat,
  Aws,
  CfnOutput,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AccessLevel,
  AllowedMethods,
  CachePolicy,
  Function as CloudFrontFunction,
  Distribution,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type FunctionUrl, FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { AaaaRecord, ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  HttpMethods,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { GROUP_NEEDS } from '../functions/needs.ts';
import { TABLE } from '../lib/db/table.ts';
import {
  DEFAULT_ROUTE_GROUP,
  FUNCTION_GROUPS,
  type FunctionGroup,
  ROUTES,
  type RouteSpec,
} from '../lib/routes.ts';
import { INCOMING_PREFIX } from '../lib/upload/prefixes.ts';
import { type FunctionClass, type NeedResources, RUNTIME, ServiceFunction } from './service-function.ts';
import type { StageConfig } from './stage-config.ts';

/** Presigned uploads land under this prefix until confirmed (lib/upload/prefixes.ts); unconfirmed ones expire. */
export const PENDING_UPLOAD_PREFIX = INCOMING_PREFIX;
export const PENDING_UPLOAD_EXPIRY_DAYS = 1;
/** What CloudFront serves from the bucket; the rest of the URL space goes to the API. */
export const IMAGE_PATH_PATTERN = '/i/*';
/** Overwritten or deleted files stay recoverable this long where data is retained (versioned bucket). */
export const NONCURRENT_VERSION_EXPIRY_DAYS = 30;
/** Browsers keep to https for this long once they have seen the header (one year). */
export const HSTS_MAX_AGE = Duration.days(365);

// JSON lines of HTTP API variables only (the default format is the REST API's); never headers or bodies.
const API_ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    time: '$context.requestTime',
    routeKey: '$context.routeKey',
    method: '$context.httpMethod',
    path: '$context.path',
    status: '$context.status',
    length: '$context.responseLength',
    latency: '$context.responseLatency',
    integrationError: '$context.integrationErrorMessage',
  }),
);

interface FunctionSpec {
  functionClass: FunctionClass;
  timeoutSeconds: number;
}

/**
 * Size and time per group; a Record so a new group in lib/routes.ts does not compile until it has one.
 * What each group ships outside its bundle (argon2, channel_b's SDK) is in infra/bundling.ts.
 */
export const FUNCTION_SPECS: Record<FunctionGroup, FunctionSpec> = {
  auth: { functionClass: 'password-hashing', timeoutSeconds: 10 },
  // API Gateway stops waiting after 30 s; confirm streams up to upload.presign_max_bytes from S3.
  upload: { functionClass: 'io', timeoutSeconds: 29 },
  files: { functionClass: 'light', timeoutSeconds: 10 },
  payments: { functionClass: 'io', timeoutSeconds: 20 },
  'payment-callback': { functionClass: 'io', timeoutSeconds: 20 },
};

// Administration of the key by the account (IAM decides who), plus the usage actions IAM policies may
// delegate. Listed one by one: the default policy's `kms:*` is a wildcard action.
const KEY_POLICY_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:CreateGrant',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RetireGrant',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:GenerateDataKey',
];

// Runs at the edge before the cache: `/i/<yyyy>/<mm>/<dd>/<file>` becomes the object key; anything else
// under /i/ (e.g. the incoming/ area of unconfirmed uploads) is not an image and never reaches the bucket.
export const IMAGE_KEY_FUNCTION = `function handler(event) {
  var request = event.request;
  var key = request.uri.substring(2);
  if (!/^\\/\\d{4}\\/\\d{2}\\/\\d{2}\\/[^\\/]+$/.test(key)) {
    return { statusCode: 404, statusDescription: 'Not Found' };
  }
  request.uri = key;
  return request;
}`;

// Runs at the edge on every API request: the viewer's address, written over anything the client sent,
// in a header the API trusts only with the origin secret (lib/http/event.ts `clientAddress`).
export const VIEWER_ADDRESS_FUNCTION = `function handler(event) {
  var request = event.request;
  request.headers['x-viewer-address'] = { value: event.viewer.ip };
  return request;
}`;

export interface ServiceStackProps extends StackProps {
  config: StageConfig;
}

export class ServiceStack extends Stack {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly masterKey: Key;
  readonly eventBus: EventBus;
  readonly functions: Record<FunctionGroup, ServiceFunction>;
  readonly api: HttpApi;
  readonly apiStage: HttpStage;
  readonly distribution: Distribution;
  /**
   * The CDN's proof to the API: this stack's own UUID (from its id), stable across deploys, written in no
   * file, and unknown to anyone outside the account.
   */
  readonly originSecret: string;
  readonly callbackUrl: FunctionUrl;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    this.originSecret = Fn.select(2, Fn.split('/', this.stackId));
    const { config } = props;
    const { infra } = config;
    const dataRemoval = infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    for (const key of config.secretKeys) {
      Annotations.of(this).addWarningV2(
        'service:secret-in-stage-config',
        `${key} is set in the ${config.stage} config and will be readable in the Lambda environment`,
      );
    }

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: infra.retainData,
      removalPolicy: dataRemoval,
    });
    for (const index of TABLE.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    const accessLogs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // CloudFront standard logs are delivered with an ACL, so this bucket keeps ACLs enabled.
      objectOwnership: ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(infra.logRetentionDays) }],
      removalPolicy: dataRemoval,
      // Throw-away stages: `cdk destroy` empties the bucket instead of failing on it.
      autoDeleteObjects: !infra.retainData,
    });
    Validations.of(accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This is the access-log bucket of the files bucket and the CDN; logging it into itself would loop.',
    });

    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'files-bucket/',
      // Browsers PUT presigned uploads straight to S3; the signature, not CORS, decides what S3 accepts.
      ...(infra.corsOrigins.length > 0
        ? {
            cors: [
              {
                allowedMethods: [HttpMethods.PUT],
                allowedOrigins: infra.corsOrigins,
                allowedHeaders: ['*'],
                exposedHeaders: ['ETag'],
                maxAge: 3600,
              },
            ],
          }
        : {}),
      lifecycleRules: [
        {
          id: 'expire-abandoned-uploads',
          prefix: PENDING_UPLOAD_PREFIX,
          expiration: Duration.days(PENDING_UPLOAD_EXPIRY_DAYS),
        },
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Where data is retained, an overwrite or delete (owner, back office, or mistake) can be undone
        // for a while; the old versions then go, so storage does not grow without bound.
        ...(infra.retainData
          ? [
              {
                id: 'expire-noncurrent-versions',
                noncurrentVersionExpiration: Duration.days(NONCURRENT_VERSION_EXPIRY_DAYS),
                expiredObjectDeleteMarker: true,
              },
            ]
          : []),
      ],
      versioned: infra.retainData,
      removalPolicy: dataRemoval,
      autoDeleteObjects: !infra.retainData,
    });

    this.masterKey = new Key(this, 'MasterKey', {
      description: `Master key of the ${config.stage} service: seals TOTP secrets and payment credentials`,
      // A name operators can find the key by (the stack name is <service>-<stage>).
      alias: `alias/${this.stackName}-master`,
      enableKeyRotation: true,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            principals: [new AccountRootPrincipal()],
            actions: KEY_POLICY_ACTIONS,
            resources: ['*'],
          }),
        ],
      }),
      removalPolicy: dataRemoval,
      pendingWindow: Duration.days(infra.retainData ? 30 : 7),
    });

    this.eventBus = new EventBus(this, 'Events', {
      description: `Domain events of the ${config.stage} service (order.paid)`,
    });

    this.functions = this.createFunctions(config);
    // Lambda's runtime list moves on; the service pins the version it is tested on (docs/DESIGN.md 1).
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason: `Functions run ${RUNTIME.name} as docs/DESIGN.md 1 fixes; moving runtimes is a deliberate, tested change.`,
    });

    // The notify address given to payment channels (docs/DESIGN.md 1): the callback function's own URL.
    this.callbackUrl = this.functions['payment-callback'].fn.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
    });
    const notifyBaseUrl = `https://${Fn.select(2, Fn.split('/', this.callbackUrl.url))}`;

    ({ api: this.api, stage: this.apiStage } = this.createApi(config));
    this.distribution = this.createDistribution(config, accessLogs);
    const baseUrl =
      infra.baseUrl ??
      (infra.domain ? `https://${infra.domain.name}` : `https://${this.distribution.distributionDomainName}`);

    // Each function's grants and environment, both derived from what its group declares it needs
    // (functions/<group>/needs.ts): nothing here is kept in sync by hand.
    const resources: NeedResources = {
      table: this.table,
      bucket: this.bucket,
      masterKey: this.masterKey,
      eventBus: this.eventBus,
      distribution: this.distribution,
      mailIdentityArn: this.mailIdentityArn(config),
      trustedProxySecret: this.originSecret,
      notifyBaseUrl,
      baseUrl,
    };
    for (const group of FUNCTION_GROUPS) {
      const fn = this.functions[group];
      const needs = GROUP_NEEDS[group];
      fn.applyNeeds(needs, resources);
      if (needs.bucket) {
        Validations.of(fn).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/*]`,
          reason:
            'Object keys are minted per upload (<yyyy>/<mm>/<dd>/<uuid>..., incoming/...), so object actions ' +
            'are granted on the key space of this one bucket; the actions themselves are listed one by one.',
        });
      }
    }

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

  private createFunctions(config: StageConfig): Record<FunctionGroup, ServiceFunction> {
    const appConfigJson = JSON.stringify(config.appConfig);
    // Lambda allows 4 KB of environment in all; leave room for the per-key overrides.
    if (Buffer.byteLength(appConfigJson) > 2500) {
      throw new Error(
        `The ${config.stage} config is ${Buffer.byteLength(appConfigJson)} bytes; keep it under 2500`,
      );
    }
    const entries = FUNCTION_GROUPS.map((group) => {
      const spec = FUNCTION_SPECS[group];
      const fn = new ServiceFunction(this, `Fn-${group}`, {
        group,
        functionClass: spec.functionClass,
        timeout: Duration.seconds(spec.timeoutSeconds),
        appConfigJson,
        logRetention: config.infra.logRetentionDays,
        logRemovalPolicy: config.infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      });
      return [group, fn] as const;
    });
    return Object.fromEntries(entries) as Record<FunctionGroup, ServiceFunction>;
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

  private createApi(config: StageConfig): { api: HttpApi; stage: HttpStage } {
    const { corsOrigins, throttle } = config.infra;
    const api = new HttpApi(this, 'Api', {
      description: `Account, upload and payment API (${config.stage})`,
      createDefaultStage: false,
      ...(corsOrigins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: corsOrigins,
              allowMethods: [
                CorsHttpMethod.GET,
                CorsHttpMethod.POST,
                CorsHttpMethod.PUT,
                CorsHttpMethod.PATCH,
                CorsHttpMethod.DELETE,
              ],
              allowHeaders: ['authorization', 'content-type'],
              exposeHeaders: ['retry-after'],
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: config.infra.logRetentionDays,
      removalPolicy: config.infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'ApiStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: throttle.rateLimit, burstLimit: throttle.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: API_ACCESS_LOG_FORMAT,
      },
    });

    // One integration (and one invoke permission) per function, not per route: 60+ route-scoped
    // permissions would crowd the functions' resource policies.
    const integrations = Object.fromEntries(
      FUNCTION_GROUPS.map((group) => [
        group,
        new HttpLambdaIntegration(`Integration-${group}`, this.functions[group].fn, {
          scopePermissionToRoute: false,
        }),
      ]),
    ) as Record<FunctionGroup, HttpLambdaIntegration>;

    const routes = new Construct(this, 'Routes');
    for (const route of ROUTES) {
      new HttpRoute(routes, routeConstructId(route), {
        httpApi: api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: integrations[route.group],
      });
    }
    // Unmatched requests still reach the service, which answers its own 404 envelope.
    new HttpRoute(routes, 'Default', {
      httpApi: api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrations[DEFAULT_ROUTE_GROUP],
    });
    Validations.of(routes).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authentication is per route in the functions (lib/routes.ts auth kinds): revocable jose sessions, ' +
        'API tokens checked against their stored hash, and signed payment callbacks; many routes are public.',
    });
    return { api, stage };
  }

  private createDistribution(config: StageConfig, logBucket: Bucket): Distribution {
    const apiOrigin = new HttpOrigin(Fn.select(2, Fn.split('/', this.api.apiEndpoint)), {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      // Proves a request came through the CDN, so its viewer-address header may be believed.
      customHeaders: { 'x-origin-verify': this.originSecret },
    });
    const viewerAddress = new CloudFrontFunction(this, 'ViewerAddress', {
      comment: 'Passes the viewer address to the API (API Gateway sees only the edge server)',
      code: FunctionCode.fromInline(VIEWER_ADDRESS_FUNCTION),
      runtime: FunctionRuntime.JS_2_0,
    });
    const imageKey = new CloudFrontFunction(this, 'ImageKey', {
      comment: 'Maps /i/<key> to the object key and refuses anything that is not an image key',
      code: FunctionCode.fromInline(IMAGE_KEY_FUNCTION),
      runtime: FunctionRuntime.JS_2_0,
    });
    // Keys carry a fresh uuid per upload and are never rewritten: cache them for as long as CloudFront will.
    const imageCache = new CachePolicy(this, 'ImageCache', {
      comment: 'Immutable image objects',
      defaultTtl: Duration.days(365),
      maxTtl: Duration.days(365),
      minTtl: Duration.seconds(0),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });

    // One policy on every behaviour: HSTS (a year, subdomains too) plus the headers of the managed
    // SECURITY_HEADERS policy the images behaviour used before; nosniff above all for user-supplied bytes.
    const securityHeaders = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'HSTS and security headers on every response of the CDN',
      securityHeadersBehavior: {
        strictTransportSecurity: {
          accessControlMaxAge: HSTS_MAX_AGE,
          includeSubdomains: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.SAMEORIGIN, override: false },
        referrerPolicy: {
          referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
          override: false,
        },
        xssProtection: { protection: true, modeBlock: true, override: false },
      },
    });
    const { domain } = config.infra;

    const distribution = new Distribution(this, 'Cdn', {
      comment: `Public address of the ${config.stage} service`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: apiOrigin,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // Everything but Host: API Gateway routes by its own host name.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: securityHeaders,
        functionAssociations: [{ function: viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        [IMAGE_PATH_PATTERN]: {
          // LIST makes a missing key a 404 instead of S3's 403; the edge function blocks any listing path.
          origin: S3BucketOrigin.withOriginAccessControl(this.bucket, {
            originAccessLevels: [AccessLevel.READ, AccessLevel.LIST],
          }),
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: imageCache,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          responseHeadersPolicy: securityHeaders,
          functionAssociations: [{ function: imageKey, eventType: FunctionEventType.VIEWER_REQUEST }],
        },
      },
      enableLogging: true,
      logBucket,
      logFilePrefix: 'cdn/',
      ...(domain
        ? {
            domainNames: [domain.name],
            certificate: Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArn),
            minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      ...(config.infra.webAclArn ? { webAclId: config.infra.webAclArn } : {}),
    });

    Validations.of(distribution).acknowledge(
      {
        id: 'Annotation::@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
        reason:
          'The LIST origin serves only /i/*, never the root, and the viewer-request function lets through ' +
          'nothing but image keys, so no request can list the bucket.',
      },
      {
        id: 'AwsSolutions-CFR1',
        reason: 'A public image host and API for users anywhere; no country is excluded by any requirement.',
      },
    );
    if (!domain) {
      Validations.of(distribution).acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, whose viewer TLS policy CloudFront ' +
          'fixes; infra.domain_name with infra.certificate_arn serves the custom domain with TLSv1.2_2021.',
      });
    }
    if (domain?.hostedZoneId) {
      // The zone is named by id only; the record names are absolute, so its name is never needed.
      const zone = HostedZone.fromHostedZoneId(this, 'Zone', domain.hostedZoneId);
      const target = RecordTarget.fromAlias(new CloudFrontTarget(distribution));
      new ARecord(this, 'AliasA', { zone, recordName: `${domain.name}.`, target });
      new AaaaRecord(this, 'AliasAAAA', { zone, recordName: `${domain.name}.`, target });
    }
    if (!config.infra.webAclArn) {
      Validations.of(distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'A CloudFront web ACL must be created in us-east-1, which this region-agnostic stack cannot do; ' +
          'set infra.web_acl_arn to attach one. Abuse limits live in API Gateway throttling and the ' +
          'per-IP and per-target counters of the service (docs/DESIGN.md 5).',
      });
    }
    return distribution;
  }
}

/** A construct id derived from the route key, so reordering lib/routes.ts never replaces a route. */
export function routeConstructId(route: Pick<RouteSpec, 'method' | 'path'>): string {
  return `${route.method} ${route.path.replaceAll('/', '|')}`;
}
