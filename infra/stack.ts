// The service in one stack: table, bucket, master key, event bus, one function per group, HTTP API, CDN.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  Annotations,
  Arn,
  ArnFormat,
  Aws,
  CfnOutput,
  Duration,
  Fn,
  RemovalPolicy,
  SecretValue,
  Stack,
  type StackProps,
  Token,
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
import { BackupPlan, BackupPlanRule, BackupResource } from 'aws-cdk-lib/aws-backup';
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
import { EventBus, Schedule } from 'aws-cdk-lib/aws-events';
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
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { GROUP_NEEDS } from '#functions/needs.ts';
import { INCOMING_PREFIX } from '#lib/files/prefixes.ts';
import { ORIGIN_VERIFY_HEADER } from '#lib/http/event.ts';
import {
  DEFAULT_ROUTE_GROUP,
  FUNCTION_GROUPS,
  type FunctionGroup,
  ROUTES,
  type RouteSpec,
} from '#lib/http/routes.ts';
import { TABLE } from '#lib/platform/db/keys.ts';
import { KEY_POLICY_ACTIONS } from './key-policy.ts';
import { Operations } from './operations.ts';
import {
  type FunctionClass,
  type NeedResources,
  PROJECT_ROOT,
  RUNTIME,
  ServiceFunction,
} from './service-function.ts';
import type { StageConfig } from './stage-config.ts';
import { TABLE_STREAM_VIEW, Workers } from './workers.ts';

/** Presigned uploads land under this prefix until confirmed (lib/files/prefixes.ts); unconfirmed ones expire. */
export const PENDING_UPLOAD_PREFIX = INCOMING_PREFIX;
export const PENDING_UPLOAD_EXPIRY_DAYS = 1;
/** What CloudFront serves from the bucket; the rest of the URL space goes to the API. */
export const IMAGE_PATH_PATTERN = '/i/*';
/** Overwritten or deleted files stay recoverable this long where data is retained (versioned bucket). */
export const NONCURRENT_VERSION_EXPIRY_DAYS = 30;
/** Browsers keep to https for this long once they have seen the header (one year). */
export const HSTS_MAX_AGE = Duration.days(365);

/**
 * Groups also reached through their own Lambda function URL: the payment callback is the channels' notify
 * address (docs/DESIGN.md 1), a second public front door where each notification proves itself by the
 * channel's signature. Its routes are in the HTTP API too (docs/SPEC.md lists them at the public address),
 * where, as for every route, the function refuses requests without the CDN's proof.
 */
export const FUNCTION_URL_GROUPS: readonly FunctionGroup[] = ['payment-callback'];

/** The web console (docs/DESIGN.md 14): web/dist, deployed to this prefix of the files bucket. */
export const CONSOLE_PREFIX = 'console/';
export const CONSOLE_PATH_PATTERN = '/console/*';
/** `/` answers the console's page; CloudFront's default root object (the rewritten path meets the behaviours). */
export const CONSOLE_ROOT_OBJECT = `${CONSOLE_PREFIX}index.html`;
export const CONSOLE_BUILD_DIR = join(PROJECT_ROOT, 'web', 'dist');

/**
 * The console's Content-Security-Policy: its own scripts and styles only (no inline script, no third-party
 * origin), images from itself (and data:/blob: previews), calls to the API on the same origin and presigned
 * PUTs to the files bucket (`bucketHosts`: its regional and global names).
 */
export function consoleContentSecurityPolicy(bucketHosts: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self' ${bucketHosts.map((host) => `https://${host}`).join(' ')}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

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
 * Size and time per group; a Record so a new group in lib/http/routes.ts does not compile until it has one.
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
// in a header the API trusts only with the origin secret (lib/http/front-door.ts).
export const VIEWER_ADDRESS_FUNCTION = `function handler(event) {
  var request = event.request;
  request.headers['x-viewer-address'] = { value: event.viewer.ip };
  return request;
}`;

export interface ServiceStackProps extends StackProps {
  config: StageConfig;
  /** The web console build (default CONSOLE_BUILD_DIR): deployed under console/ when it holds index.html. */
  consoleDir?: string;
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
   * The CDN's proof to the API (lib/http/front-door.ts): generated by Secrets Manager (JSON `current`, and
   * `previous` while a rotation settles), sent by the CDN through a dynamic reference so the template
   * holds no value, read by each API function at run time.
   */
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
      // The outbox drain reads order.paid from it (infra/workers.ts).
      stream: TABLE_STREAM_VIEW,
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

    this.originSecret = new Secret(this, 'OriginSecret', {
      description: `Proof that a request to the ${config.stage} API came through its CDN (x-origin-verify)`,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: 'current',
        passwordLength: 48,
        // It travels in an HTTP header: letters and digits only.
        excludePunctuation: true,
      },
      // Nothing depends on its value surviving the stack: a new stack generates its own.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The CDN and the functions must change together: rotation is the overlapping procedure of ' +
        'docs/DEPLOYMENT.md (new value as current, old as previous, then infra.origin_secret_version), ' +
        'which a rotation Lambda could not do without updating the distribution itself.',
    });
    if (infra.backup) this.backUpTable(infra.backup.retentionDays);

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
    this.distribution = this.createDistribution(config, accessLogs, props.consoleDir ?? CONSOLE_BUILD_DIR);
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
      originSecret: this.originSecret,
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
      callbackFunction: this.functions['payment-callback'],
      table: this.table,
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
        // Each function keeps capacity when another is flooded, and none takes the account's (stage config).
        reservedConcurrency: config.infra.reservedConcurrency[group],
        tracing: config.infra.tracing,
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
              // x-request-id: a browser can show it for a support ticket (docs/OBSERVABILITY.md).
              exposeHeaders: ['retry-after', 'x-request-id'],
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

    // One front door: every function API Gateway reaches refuses requests without the CDN's origin secret
    // (lib/http/front-door.ts), which only the `frontDoor` need lets it read. A group without it would be
    // reachable at the execute-api address: refuse to synthesize that.
    const apiGroups = FUNCTION_GROUPS;
    for (const group of apiGroups) {
      if (!GROUP_NEEDS[group].frontDoor)
        throw new Error(
          `The ${group} function is reached through API Gateway but functions/${group}/needs.ts does not ` +
            'declare frontDoor: it would serve direct execute-api calls',
        );
    }

    // One integration (and one invoke permission) per function, not per route: 60+ route-scoped
    // permissions would crowd the functions' resource policies.
    const integrations = Object.fromEntries(
      apiGroups.map((group) => [
        group,
        new HttpLambdaIntegration(`Integration-${group}`, this.functions[group].fn, {
          scopePermissionToRoute: false,
        }),
      ]),
    ) as Partial<Record<FunctionGroup, HttpLambdaIntegration>>;

    const routes = new Construct(this, 'Routes');
    for (const route of ROUTES) {
      const integration = integrations[route.group];
      if (!integration) throw new Error(`No integration for the ${route.group} group`);
      new HttpRoute(routes, routeConstructId(route), {
        httpApi: api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration,
      });
    }
    // Unmatched requests still reach the service, which answers its own 404 envelope.
    new HttpRoute(routes, 'Default', {
      httpApi: api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integrations[DEFAULT_ROUTE_GROUP]!,
    });
    Validations.of(routes).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authentication is per route in the functions (lib/http/routes.ts auth kinds): revocable jose sessions, ' +
        'API tokens checked against their stored hash, and signed payment callbacks; many routes are public.',
    });
    return { api, stage };
  }

  private createDistribution(config: StageConfig, logBucket: Bucket, consoleDir: string): Distribution {
    const apiOrigin = new HttpOrigin(Fn.select(2, Fn.split('/', this.api.apiEndpoint)), {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      // One front door: the functions serve only requests carrying the origin secret. A dynamic reference,
      // resolved by CloudFormation at deploy time: the template names the secret, never its value.
      customHeaders: {
        [ORIGIN_VERIFY_HEADER]: SecretValue.secretsManager(this.originSecret.secretArn, {
          jsonField: 'current',
          ...(config.infra.originSecretVersion ? { versionId: config.infra.originSecretVersion } : {}),
        }).unsafeUnwrap(),
      },
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
    // The console's pages: the same HSTS and headers, with a strict CSP and no framing at all.
    const consoleHeaders = new ResponseHeadersPolicy(this, 'ConsoleHeaders', {
      comment: 'HSTS, a strict Content-Security-Policy and security headers for the web console',
      securityHeadersBehavior: {
        strictTransportSecurity: {
          accessControlMaxAge: HSTS_MAX_AGE,
          includeSubdomains: true,
          override: true,
        },
        contentSecurityPolicy: {
          // The bucket by its regional and its global name: which one a presigned URL carries depends on
          // the SDK and the region (us-east-1), and both are this bucket only.
          contentSecurityPolicy: consoleContentSecurityPolicy([
            this.bucket.bucketRegionalDomainName,
            this.bucket.bucketDomainName,
          ]),
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: {
          referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
          override: true,
        },
        xssProtection: { protection: true, modeBlock: true, override: false },
      },
    });
    // LIST makes a missing key a 404 instead of S3's 403; /i/* lets through image keys only, /console/*
    // maps to the console/ prefix, and neither forwards a query string, so no request can list the bucket.
    const bucketOrigin = S3BucketOrigin.withOriginAccessControl(this.bucket, {
      originAccessLevels: [AccessLevel.READ, AccessLevel.LIST],
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
          origin: bucketOrigin,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: imageCache,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          responseHeadersPolicy: securityHeaders,
          functionAssociations: [{ function: imageKey, eventType: FunctionEventType.VIEWER_REQUEST }],
        },
        // The web console from the bucket's console/ prefix (hashed assets cached long, the page revalidated
        // by its own Cache-Control); every other path stays the API's.
        [CONSOLE_PATH_PATTERN]: {
          origin: bucketOrigin,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: CachePolicy.CACHING_OPTIMIZED,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          responseHeadersPolicy: consoleHeaders,
        },
      },
      // `/` becomes /console/index.html before the behaviours are matched, so it reaches the console
      // behaviour; no API route lives at `/`.
      defaultRootObject: CONSOLE_ROOT_OBJECT,
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
      ...(config.infra.waf ? { webAclId: this.createWebAcl(config.infra.waf.rateLimit).attrArn } : {}),
    });

    Validations.of(distribution).acknowledge(
      {
        id: 'Annotation::@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
        reason:
          'The LIST origin serves only /i/* and /console/*, never the root, without query strings; the ' +
          '/i/* viewer-request function lets through nothing but image keys, so no request can list the bucket.',
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
    if (!config.infra.webAclArn && !config.infra.waf) {
      Validations.of(distribution).acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'This stage sets neither infra.waf (a web ACL the stack creates, us-east-1 stacks only) nor ' +
          'infra.web_acl_arn (one made in us-east-1 apart). Abuse limits live in API Gateway throttling, ' +
          'reserved concurrency and the per-IP and per-target counters of the service (docs/DESIGN.md 5).',
      });
    }
    this.deployConsole(distribution, consoleDir);
    return distribution;
  }

  /**
   * A CLOUDFRONT-scoped web ACL (the stage config allows it only in us-east-1): one rate-based rule that
   * blocks an address over `rateLimit` requests in 5 minutes. No managed rule groups: their body-size and
   * content rules would refuse legitimate uploads and channel notifications.
   */
  private createWebAcl(rateLimit: number): CfnWebACL {
    const metrics = (name: string) => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${this.stackName}-${name}`.replace(/[^A-Za-z0-9_-]/g, '-'),
      sampledRequestsEnabled: true,
    });
    return new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      description: `Per-address request limit in front of the ${this.stackName} CDN`,
      visibilityConfig: metrics('web-acl'),
      rules: [
        {
          name: 'rate-per-address',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: rateLimit } },
          visibilityConfig: metrics('rate-per-address'),
        },
      ],
    });
  }

  /**
   * web/dist (npm run build:web) into the bucket's console/ prefix: hashed assets immutable for a year, the
   * page revalidated on every load so a deploy shows at once. Without a build (template tests, a synth
   * before building) the stack carries no deployment and says so; the behaviour then answers 404.
   */
  private deployConsole(distribution: Distribution, consoleDir: string): void {
    if (!existsSync(join(consoleDir, 'index.html'))) {
      Annotations.of(this).addWarningV2(
        'service:console-not-built',
        `No web console build at ${consoleDir}; the console is not deployed (build it before deploying).`,
      );
      return;
    }
    const source = Source.asset(consoleDir);
    const assets = new BucketDeployment(this, 'ConsoleAssets', {
      sources: [source],
      destinationBucket: this.bucket,
      destinationKeyPrefix: CONSOLE_PREFIX,
      exclude: ['index.html'],
      cacheControl: [CacheControl.fromString('public, max-age=31536000, immutable')],
      // Old hashed files go, but only under console/ (and never the page, which the next step writes).
      prune: true,
      memoryLimit: 256,
    });
    const page = new BucketDeployment(this, 'ConsolePage', {
      sources: [source],
      destinationBucket: this.bucket,
      destinationKeyPrefix: CONSOLE_PREFIX,
      exclude: ['*'],
      include: ['index.html'],
      cacheControl: [CacheControl.noCache()],
      prune: false,
      distribution,
      distributionPaths: ['/', `/${CONSOLE_ROOT_OBJECT}`],
      memoryLimit: 256,
    });
    // The page names the assets: they must be in place before it.
    page.node.addDependency(assets);
    // CDK's one handler function per stack for every BucketDeployment, a sibling of the deployments.
    const handlers = this.node.children.filter((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    // CDK's bootstrap asset bucket, named literally once the stage pins account and region.
    const assetBucketObjects =
      Token.isUnresolved(this.account) || Token.isUnresolved(this.region)
        ? 'arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*'
        : `arn:aws:s3:::cdk-hnb659fds-assets-${this.account}-${this.region}/*`;
    const filesArn = `<${this.getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/*`;
    const cdkReason =
      "CDK's BucketDeployment handler (one per stack, run only at deploy) copies the build from CDK's " +
      'asset bucket into console/ of the files bucket and invalidates the page; its grants are CDK-made.';
    for (const handler of handlers) {
      Validations.of(handler).acknowledge(
        ...[
          'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          'AwsSolutions-IAM5[Action::s3:GetBucket*]',
          'AwsSolutions-IAM5[Action::s3:GetObject*]',
          'AwsSolutions-IAM5[Action::s3:List*]',
          'AwsSolutions-IAM5[Action::s3:Abort*]',
          'AwsSolutions-IAM5[Action::s3:DeleteObject*]',
          `AwsSolutions-IAM5[Resource::${assetBucketObjects}]`,
          `AwsSolutions-IAM5[Resource::${filesArn}]`,
          // CloudFront's CreateInvalidation/GetInvalidation take no resource narrower than this.
          'AwsSolutions-IAM5[Resource::*]',
        ].map((id) => ({ id, reason: cdkReason })),
      );
    }
  }

  /** Daily AWS Backup of the table into the plan's own vault (kept beyond the 35 days of PITR). */
  private backUpTable(retentionDays: number): void {
    const plan = new BackupPlan(this, 'Backup', {
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: 'daily',
          scheduleExpression: Schedule.cron({ hour: '3', minute: '0' }),
          deleteAfter: Duration.days(retentionDays),
        }),
      ],
    });
    plan.addSelection('Table', { resources: [BackupResource.fromDynamoDbTable(this.table)] });
    Validations.of(plan).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
      reason:
        'AWS Backup assumes its role with the AWS-managed backup and restore policies, the documented way ' +
        'to let it read the table; the role is used by the backup service alone.',
    });
  }
}

/** A construct id derived from the route key, so reordering lib/http/routes.ts never replaces a route. */
export function routeConstructId(route: Pick<RouteSpec, 'method' | 'path'>): string {
  return `${route.method} ${route.path.replaceAll('/', '|')}`;
}
