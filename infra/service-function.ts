// "A function of this service": runtime, architecture, memory class, logs, bundling, and its needs applied
// as environment and grants together.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, type Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IDistribution, IKeyValueStore } from 'aws-cdk-lib/aws-cloudfront';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  ApplicationLogLevel,
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { WorkerName } from '#functions/needs.ts';
import { BANS_PARTITION } from '#lib/accounts/bans.ts';
import { OWNER_RULES_PREFIX } from '#lib/files/owner-rules.ts';
import { DERIVED_PREFIX } from '#lib/files/prefixes.ts';
import { RENDITION_CLAIM_PREFIX } from '#lib/files/rendition-claims.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { planKey, TABLE } from '#lib/platform/db/keys.ts';
import { CDN_LOG_PREFIX } from '#lib/platform/storage/access-logs.ts';
import { type Access, environmentFor, type GroupNeeds } from '#lib/wiring/needs.ts';
import {
  BUNDLE_MAIN_FIELDS,
  BUNDLE_MINIFY,
  BUNDLE_SOURCE_MAP,
  BUNDLE_SOURCES_CONTENT,
  BUNDLE_TARGET,
  ESM_REQUIRE_BANNER,
  externalModulesOf,
  functionEntry,
  GROUP_PACKAGES,
  type LambdaCpu,
  nativeChecks,
  nodeModulesOf,
  PROJECT_ROOT,
  packageFileCommands,
  processEntryCommands,
  projectFileCommands,
} from './bundling.ts';
import { providerSecretArns } from './secret-arns.ts';
import type { StageConfig } from './stage-config.ts';
import type { BannedAddressSets } from './waf.ts';

export const RUNTIME = Runtime.NODEJS_22_X;
export const ARCHITECTURE = Architecture.ARM_64;

/** Memory follows what the function spends CPU on (Lambda gives CPU in proportion to memory). */
export type FunctionClass = 'password-hashing' | 'image-rendering' | 'io' | 'light';
export const MEMORY_MB: Record<FunctionClass, number> = {
  // argon2id (m=19456 KiB, t=2) per login and registration: at 1024 MB a hash stays well under 100 ms.
  'password-hashing': 1024,
  // libvips decoding up to images.max_input_pixels and encoding (docs/CAPACITY.md "The render function"):
  // one full vCPU, as sharp's default on glibc Linux is one libvips thread per image, so more memory buys
  // no speed and less slows every render in proportion; the worst render measured peaked at 467 MiB.
  'image-rendering': 1769,
  // SDK calls, streaming hashes of uploads, RSA signatures for payment channels.
  io: 512,
  light: 256,
};

/**
 * Sealing needs all three: a container that finds no token-signing key yet creates one (GenerateDataKey),
 * and envelopes are opened with Decrypt.
 */
const MASTER_KEY_ACTIONS = ['kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey'];

/** The stack's resources behind the needs (lib/wiring/needs.ts). */
export interface NeedResources {
  table: ITable;
  bucket: IBucket;
  /** The CDN's access logs (`cdn/`): the bandwidth worker reads them. */
  accessLogs: IBucket;
  masterKey: IKey;
  eventBus: IEventBus;
  /** The CDN in front of the API and /i/*: takedowns invalidate their file's path in it. */
  distribution: IDistribution;
  /** The deny-list of taken-down files its /i/* edge function reads (infra/edge.ts). */
  denyList: IKeyValueStore;
  /** The WAF's IP sets of banned networks: only where the stack has its own web ACL (infra/waf.ts). */
  bannedAddressSets?: BannedAddressSets;
  /** The SES identity mail is sent as; absent when the stage sets no mail.from. */
  mailIdentityArn: string | undefined;
  /** The CDN's origin secret (lib/http/front-door.ts): read by every function API Gateway reaches. */
  originSecret: ISecret;
  notifyBaseUrl: string;
  baseUrl: string;
}

// Item-level actions only: transactions are authorised per contained action, so no Transact* action exists.
const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
];

/** What a render does with its rendition's claim: takes it, reads who holds it, gives it up. */
const RENDITION_CLAIM_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'];

export interface ServiceFunctionProps {
  /** An API group (lib/http/routes.ts) or a worker (functions/needs.ts WORKER_NEEDS). */
  group: FunctionGroup | WorkerName;
  functionClass: FunctionClass;
  timeout: Duration;
  /**
   * The stage: its settings for lib/platform/config (APP_CONFIG_JSON; per-key overrides come from the bind
   * helpers), log retention, reserved concurrency (absent: the function runs unreserved) and tracing (the
   * Tracer then ships beside the bundle, infra/bundling.ts TRACER_PACKAGES).
   */
  config: StageConfig;
  description?: string;
}

export class ServiceFunction extends Construct {
  readonly group: FunctionGroup | WorkerName;
  readonly fn: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** The stage's settings, for grants they decide (the moderation provider). */
  private readonly settings: StageConfig['settings'];

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.group = props.group;
    this.settings = props.config.settings;
    const { infra } = props.config;
    const entry = functionEntry(props.group);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: infra.logRetentionDays,
      removalPolicy: infra.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    // An own role instead of AWSLambdaBasicExecutionRole: logs only into this function's group.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.group} function`,
    });
    this.allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [this.logGroup.logGroupArn]);

    const common = {
      runtime: RUNTIME,
      architecture: ARCHITECTURE,
      // A stage may size one function apart from its class (prod's auth: one full vCPU for argon2id).
      memorySize: infra.memoryMb[props.group] ?? MEMORY_MB[props.functionClass],
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      ...loggingOf(props.config),
      description: props.description ?? `${props.group} endpoints`,
      ...(infra.reservedConcurrency[props.group] !== undefined
        ? { reservedConcurrentExecutions: infra.reservedConcurrency[props.group] }
        : {}),
      // No --enable-source-maps: it costs every cold start 12 to 19 ms of CPU (docs/PERFORMANCE.md "Cold
      // start"); the maps still ship beside each bundle, to map a logged stack offline.
      environment: { APP_CONFIG_JSON: JSON.stringify(props.config.appConfig) },
    };

    if (!existsSync(entry) && !Stack.of(this).bundlingRequired) {
      // Template checks run with bundling skipped and must not wait for every handler to be written.
      Annotations.of(this).addWarningV2(
        'service:missing-entry',
        `No handler at ${entry}; placeholder code used.`,
      );
      this.fn = new LambdaFunction(this, 'Function', {
        ...common,
        code: Code.fromInline('export const handler = async () => ({ statusCode: 503 });'),
        handler: 'index.handler',
      });
      return;
    }

    const packages = GROUP_PACKAGES[props.group];
    const installed = nodeModulesOf(packages, { tracing: infra.tracing });
    this.fn = new NodejsFunction(this, 'Function', {
      ...common,
      entry,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      // infra/bundling.ts holds these for scripts/bundle.ts too (the bundles the benchmarks time).
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        mainFields: BUNDLE_MAIN_FIELDS,
        banner: ESM_REQUIRE_BANNER,
        minify: BUNDLE_MINIFY,
        sourceMap: BUNDLE_SOURCE_MAP,
        sourcesContent: BUNDLE_SOURCES_CONTENT,
        // The pinned SDK the tests ran against, not whatever version the runtime happens to carry.
        bundleAwsSDK: true,
        externalModules: externalModulesOf(packages),
        ...(installed.length > 0
          ? {
              nodeModules: installed,
              // npm picks optional platform packages by these: the Lambda's, not the build machine's.
              environment: {
                npm_config_cpu: npmCpuOf(ARCHITECTURE),
                npm_config_os: 'linux',
                npm_config_libc: 'glibc',
              },
            }
          : {}),
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            // The scripts it runs as processes of its own, beside index.mjs (the render process).
            ...processEntryCommands(inputDir, outputDir, props.group),
            // Package files it reads at run time (the moderation model's WebAssembly).
            ...packageFileCommands(inputDir, outputDir, packages),
            // Project files it reads at run time (the API reference's guides).
            ...projectFileCommands(inputDir, outputDir, props.group),
            // Its native addons arrived built for Lambda; it imports none that it does not ship.
            ...nativeChecks(outputDir, props.group, packages, npmCpuOf(ARCHITECTURE)),
            // The install needed the project's whole lock file; the function needs neither it nor the
            // generated package.json (the bundle is index.mjs, its packages sit in node_modules).
            ...(installed.length > 0
              ? [`rm -f "${outputDir}/package-lock.json" "${outputDir}/package.json"`]
              : []),
          ],
        },
      },
    });
  }

  /**
   * What the group declares it needs (functions/<group>/needs.ts), bound together: the environment
   * lib/wiring/needs.ts derives from the needs, and the grants that make those variables usable.
   */
  applyNeeds(needs: GroupNeeds, resources: NeedResources): this {
    const environment = environmentFor(needs, {
      baseUrl: resources.baseUrl,
      tableName: resources.table.tableName,
      bucketName: resources.bucket.bucketName,
      masterKey: { provider: 'kms', keyId: resources.masterKey.keyArn },
      eventBusName: resources.eventBus.eventBusName,
      frontDoor: { provider: 'secrets-manager', secretId: resources.originSecret.secretArn },
      notifyBaseUrl: resources.notifyBaseUrl,
      distributionId: resources.distribution.distributionId,
      denyListArn: resources.denyList.keyValueStoreArn,
      accessLogBucketName: resources.accessLogs.bucketName,
      ...(resources.bannedAddressSets
        ? {
            banIpSetArns: {
              ipv4: resources.bannedAddressSets.ipv4.attrArn,
              ipv6: resources.bannedAddressSets.ipv6.attrArn,
            },
          }
        : {}),
    });
    for (const [name, value] of Object.entries(environment)) this.fn.addEnvironment(name, value);
    if (needs.table) this.grantTable(resources.table, needs.table);
    if (needs.bucket) this.grantBucket(resources.bucket, needs.bucket);
    // Renditions are written once under derived/ (lib/files/prefixes.ts), and taken back only when their
    // file was deleted while they rendered: Put and Delete there only, so no query can touch an original or
    // an upload in flight.
    if (needs.renditions)
      this.allow(['s3:PutObject', 's3:DeleteObject'], [resources.bucket.arnForObjects(`${DERIVED_PREFIX}*`)]);
    // The renditions' claims: three item actions, on `RENDITION#` partitions only (lib/files/rendition-claims.ts);
    // and which mark an owner's images carry: their rules' item and their plan's, read (lib/files/owner-marks.ts).
    if (needs.renditionClaims) {
      const reads = [`${OWNER_RULES_PREFIX}*`, `${planKey('').pk}*`];
      for (const [actions, keys] of [
        [RENDITION_CLAIM_ACTIONS, [`${RENDITION_CLAIM_PREFIX}*`]],
        [['dynamodb:GetItem'], reads],
      ]) {
        const conditions = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keys } };
        this.role.addToPolicy(
          new PolicyStatement({ actions, resources: [resources.table.tableArn], conditions }),
        );
      }
    }
    // The bans: Query of the one `BANS` partition (lib/accounts/bans.ts), for groups with or without the table
    // (StringLike with no wildcard: that key exactly, in the form the render function's claims grant takes).
    if (needs.bans) {
      this.role.addToPolicy(
        new PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: [resources.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [BANS_PARTITION] } },
        }),
      );
    }
    // The ban mirror's two calls, on the stack's two sets of banned networks and nothing else.
    if (needs.wafIpSets && resources.bannedAddressSets) {
      const { ipv4, ipv6 } = resources.bannedAddressSets;
      this.allow(['wafv2:GetIPSet', 'wafv2:UpdateIPSet'], [ipv4.attrArn, ipv6.attrArn]);
    }
    // The named operations of the KMS master key (envelope encryption in lib/platform/crypto).
    if (needs.masterKey) this.allow(MASTER_KEY_ACTIONS, [resources.masterKey.keyArn]);
    // PutEvents on the bus that carries `order.paid`.
    if (needs.events) this.allow(['events:PutEvents'], [resources.eventBus.eventBusArn]);
    // Without an SES identity (no mail.from) mail goes to the log and nothing is granted; with one, sending
    // through SES as that one verified identity.
    if (needs.mail && resources.mailIdentityArn)
      this.allow(['ses:SendEmail', 'ses:SendRawEmail'], [resources.mailIdentityArn]);
    if (needs.cdn) {
      this.grantInvalidation(resources.distribution);
      // The deny-list's data plane: its version, and writes of its keys (nothing else of CloudFront).
      this.allow(
        ['cloudfront-keyvaluestore:DescribeKeyValueStore', 'cloudfront-keyvaluestore:UpdateKeys'],
        [resources.denyList.keyValueStoreArn],
      );
    }
    // The CDN's logs: list the bucket under cdn/ and read those objects only.
    if (needs.accessLogs) {
      this.role.addToPolicy(
        new PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [resources.accessLogs.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${CDN_LOG_PREFIX}*`] } },
        }),
      );
      this.allow(['s3:GetObject'], [resources.accessLogs.arnForObjects(`${CDN_LOG_PREFIX}*`)]);
    }
    // DetectModerationLabels takes no resource (`*`): granted only where the deployment chose Rekognition.
    if (needs.moderationApi && this.settings.moderation.provider === 'rekognition')
      this.allow(['rekognition:DetectModerationLabels'], ['*']);
    // GetSecretValue on the one secret, by its full ARN (no DescribeSecret, no other secret).
    if (needs.frontDoor) this.allow(['secretsmanager:GetSecretValue'], [resources.originSecret.secretArn]);
    // The sign-in providers' secrets, each by its ARN (infra/secret-arns.ts).
    const providerSecrets = providerSecretArns(Stack.of(this.fn), this.settings.auth.providers);
    if (needs.providerSecrets && providerSecrets.length > 0)
      this.allow(['secretsmanager:GetSecretValue'], providerSecrets);
    return this;
  }

  allow(actions: string[], resources: string[]): void {
    this.role.addToPolicy(new PolicyStatement({ actions, resources }));
  }

  /** Item actions on the table, Query on each declared index. */
  private grantTable(table: ITable, access: Access): void {
    this.allow(access === 'read' ? TABLE_READ_ACTIONS : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS], [
      table.tableArn,
    ]);
    // Each index by name (lib/platform/db/keys.ts), not `index/*`.
    this.allow(
      ['dynamodb:Query'],
      TABLE.indexes.map((index) => `${table.tableArn}/index/${index.name}`),
    );
  }

  /**
   * Object actions on the bucket's keys. ListBucket lets a missing key answer NoSuchKey (404) instead of
   * AccessDenied.
   */
  private grantBucket(bucket: IBucket, access: Access): void {
    const actions =
      access === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'];
    this.allow(actions, [bucket.arnForObjects('*')]);
    this.allow(['s3:ListBucket'], [bucket.bucketArn]);
  }

  /** CreateInvalidation on the one distribution (a distribution ARN has no region). */
  private grantInvalidation(distribution: IDistribution): void {
    const arn = Stack.of(this).formatArn({
      service: 'cloudfront',
      region: '',
      resource: 'distribution',
      resourceName: distribution.distributionId,
    });
    this.allow(['cloudfront:CreateInvalidation'], [arn]);
  }
}

function npmCpuOf(architecture: Architecture): LambdaCpu {
  return architecture === Architecture.ARM_64 ? 'arm64' : 'x64';
}

/**
 * Lambda's own START, END and REPORT lines are INFO system logs: without `infra.platform_logs` (prod) the
 * JSON log format with system logs at WARN drops them, so a request's one line is its only line at INFO
 * (docs/OBSERVABILITY.md). Lambda filters none of the service's own lines (TRACE): the stage's `log.level`
 * does, and an EMF document, which has no level, must pass whatever it is.
 */
function loggingOf(config: StageConfig) {
  if (config.infra.platformLogs) return { loggingFormat: LoggingFormat.TEXT };
  return {
    loggingFormat: LoggingFormat.JSON,
    systemLogLevelV2: SystemLogLevel.WARN,
    applicationLogLevelV2: ApplicationLogLevel.TRACE,
  };
}
