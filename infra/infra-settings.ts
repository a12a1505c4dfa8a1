// The `infra` section of a stage file: its schema, the defaults each stage gets, and the settings the stack reads.
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { WORKER_NAMES, type WorkerName } from '#functions/needs.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '#lib/http/routes.ts';
import * as z from '#lib/platform/zod.ts';
import {
  DEFAULT_ACCOUNT_CONCURRENCY,
  LAMBDA_UNRESERVED_MINIMUM,
  PER_ADDRESS_LIMITS,
  prodReservedConcurrency,
} from './capacity.ts';
import { COST_SETTINGS, type CostSettings, costProblems, costSettingsOf } from './cost-settings.ts';
import { LEGACY_INDEX_STEPS } from './index-move.ts';

const RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'),
);

/** A string matching `pattern`, else `message`. */
const matching = (pattern: RegExp, message: string) => z.string().check(z.regex(pattern, message));

// An origin is scheme + host (+ port), nothing after it: that is what browsers send in `Origin`.
const origin = matching(
  /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/,
  'must be an origin like https://app.example.com',
);

// A host name: labels of letters, digits and hyphens, at least one dot (what a CloudFront alias accepts).
const hostName = matching(
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
  'must be a lower-case host name like api.example.com',
);

// CloudFront takes viewer certificates only from ACM in us-east-1, whatever region the stack is in.
export const CERTIFICATE_REGION = 'us-east-1';
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/;
const certificateArn = z.string().check(
  z.regex(
    ACM_CERTIFICATE_ARN,
    'must be an ACM certificate ARN (arn:aws:acm:us-east-1:<account>:certificate/<id>)',
  ),
  z.refine(
    (arn) => ACM_CERTIFICATE_ARN.exec(arn)?.[1] === CERTIFICATE_REGION,
    `must be a certificate in ${CERTIFICATE_REGION} (CloudFront uses no other region's certificates)`,
  ),
);

// CLOUDFRONT-scoped web ACLs live in us-east-1 and have `global` in their ARN.
const CLOUDFRONT_WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/[\w-]+\/[a-f0-9-]+$/;

/**
 * What a prod stage reserves per function unless its file says otherwise: the capacity model's derivation
 * (infra/capacity.ts, docs/CAPACITY.md). Each function keeps capacity when another is flooded, and none can
 * take the whole account. It is more than the default account quota allows, so a prod stage also states the
 * quota it was granted (`lambda_concurrency_quota`).
 */
export const PRODUCTION_RESERVED_CONCURRENCY: Record<FunctionGroup, number> = prodReservedConcurrency();

/** Daily AWS Backup of the table, kept this long, on by default in prod (docs/DEPLOYMENT.md). */
export const DEFAULT_BACKUP_RETENTION_DAYS = 90;

/** A whole number from min to max. */
const wholeNumber = (min: number, max: number) => z.number().check(z.int(), z.minimum(min), z.maximum(max));

/** Requests one address may make in WAF's 5 minutes, from WAF's minimum (10). */
const wafLimit = (fallback: number) => z._default(wholeNumber(10, 2_000_000_000), fallback);
const wafSchema = z.strictObject({
  rate_limit: wafLimit(PER_ADDRESS_LIMITS.all),
  render_rate_limit: wafLimit(PER_ADDRESS_LIMITS.renders),
  original_rate_limit: wafLimit(PER_ADDRESS_LIMITS.originals),
  code_rate_limit: wafLimit(PER_ADDRESS_LIMITS.codes),
});
const throttleOf = (rate: number, burst: number) =>
  z.object({
    rate_limit: z._default(z.number().check(z.int(), z.minimum(1)), rate),
    burst_limit: z._default(z.number().check(z.int(), z.minimum(1)), burst),
  });

export const infraSchema = z.strictObject({
  /** The AWS account this stage deploys to; pins the stack's env (required for prod). */
  account: z.optional(matching(/^\d{12}$/, 'must be a 12-digit AWS account id')),
  /** The AWS region this stage deploys to; pins the stack's env (required for prod). */
  region: z.optional(matching(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region like eu-west-1')),
  /** A custom domain for the distribution; needs certificate_arn. */
  domain_name: z.optional(hostName),
  /** The ACM certificate (us-east-1) that covers domain_name. */
  certificate_arn: z.optional(certificateArn),
  /** A Route 53 hosted zone holding domain_name: the stack then adds the alias records. */
  hosted_zone_id: z.optional(
    matching(/^Z[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id like Z0123456789ABCDEFGHIJ'),
  ),
  /** Browser origins allowed to call the API and to PUT presigned uploads into the bucket. */
  cors_origins: z._default(z.array(origin), []),
  /** Keep the table, bucket and key when the stack goes away; default true except local and dev. */
  retain_data: z.optional(z.boolean()),
  log_retention_days: z.optional(
    z.number().check(
      z.int(),
      z.refine(
        (days) => RETENTION_DAYS.has(days),
        'must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, ...)',
      ),
    ),
  ),
  /** The SES identity (domain or address) mail is sent as; default: the domain of mail.from. */
  mail_identity: z.optional(z.string().check(z.trim(), z.minLength(1))),
  /** The public address when a custom domain fronts the distribution; default: the CloudFront URL. */
  base_url: z.optional(z.url({ protocol: /^https$/ })),
  /** An existing CloudFront-scoped WAF web ACL (it lives in us-east-1) to attach to the distribution. */
  web_acl_arn: z.optional(
    matching(
      CLOUDFRONT_WEB_ACL_ARN,
      'must be a CLOUDFRONT-scoped web ACL ARN (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>)',
    ),
  ),
  /**
   * A web ACL this stack creates with per-address rate rules (infra/waf.ts), only in a stack pinned to
   * us-east-1: requests one address may make in any 5 minutes, in all and per costly kind (defaults:
   * PER_ADDRESS_LIMITS). Default: on in a prod stage without web_acl_arn; false: none.
   */
  waf: z.optional(z.union([z.literal(false), wafSchema])),
  /** The render route's own throttle (GET /i/{key+}), inside the stage's; absent: the stage's alone. */
  render_throttle: z.optional(throttleOf(1, 1)),
  /**
   * Reserved concurrency per function, API groups and workers alike (default: PRODUCTION_RESERVED_CONCURRENCY
   * in prod, none elsewhere; the workers are never reserved by default).
   */
  reserved_concurrency: z.optional(
    z.partialRecord(z.enum([...FUNCTION_GROUPS, ...WORKER_NAMES]), wholeNumber(1, 1_000_000)),
  ),
  /**
   * The account's Lambda concurrent executions quota in this stage's region (Service Quotas), default
   * 1,000: the reservations must leave Lambda's unreserved 100 of it (docs/CAPACITY.md says what to ask for).
   */
  lambda_concurrency_quota: z._default(wholeNumber(1, 1_000_000), DEFAULT_ACCOUNT_CONCURRENCY),
  /** Memory (MB) per function where it differs from its class (infra/service-function.ts MEMORY_MB). */
  memory_mb: z.optional(
    z.partialRecord(z.enum([...FUNCTION_GROUPS, ...WORKER_NAMES]), wholeNumber(128, 10_240)),
  ),
  /** Daily AWS Backup of the table (default on in prod); false turns it off. */
  backup: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({ retention_days: z._default(wholeNumber(1, 36500), DEFAULT_BACKUP_RETENTION_DAYS) }),
    ]),
  ),
  /**
   * The Secrets Manager version of the origin secret the CDN sends (docs/DEPLOYMENT.md "Rotating the
   * origin secret"); changing it is what makes CloudFormation read the secret again.
   */
  origin_secret_version: z.optional(
    matching(/^[A-Za-z0-9-]{32,64}$/, 'must be a Secrets Manager version id'),
  ),
  /** Where alarm notifications are e-mailed (an SNS subscription the address must confirm). */
  alarm_email: z.optional(z.email()),
  /** X-Ray tracing of every function (AWS SDK calls captured); default: on in prod only. */
  tracing: z.optional(z.boolean()),
  /** Percent of requests X-Ray records where tracing is on (a sampling rule, infra/cost-alarms.ts). */
  xray_sampling_percent: z._default(z.number().check(z.minimum(0), z.maximum(100)), 5),
  /** Lambda's START, END and REPORT lines of every invocation; default: on except in prod. */
  platform_logs: z.optional(z.boolean()),
  /** API Gateway's access log, a line per request; default: on except in prod (the CDN's logs hold them). */
  api_access_log: z.optional(z.boolean()),
  /** Minutes between payment reconciliation runs (docs/DESIGN.md 14). */
  reconcile_every_minutes: z._default(wholeNumber(1, 1440), 5),
  /** Days the event bus archive keeps order.paid for replay; default 365 where data is retained, else 30. */
  event_archive_days: z.optional(wholeNumber(1, 3650)),
  /**
   * A table deployed before the sharded listings moves to the current indexes one deploy per step
   * (infra/index-move.ts, docs/DEPLOYMENT.md "Moving to the sharded listings"); absent: the current ones.
   */
  legacy_indexes: z.optional(z.enum(LEGACY_INDEX_STEPS)),
  throttle: z.prefault(throttleOf(50, 100), {}),
  ...COST_SETTINGS,
});

/** The `infra` section as the schema yields it (snake_case, defaults filled in). */
export type InfraFile = z.infer<typeof infraSchema>;

/** A custom domain for the distribution: the name, its us-east-1 certificate, and optionally its zone. */
export interface DomainSettings {
  name: string;
  certificateArn: string;
  hostedZoneId?: string;
}

export interface InfraSettings extends CostSettings {
  /** Where the stack deploys (its env); without them synth stays environment-agnostic. */
  account?: string;
  region?: string;
  domain?: DomainSettings;
  corsOrigins: string[];
  retainData: boolean;
  logRetentionDays: RetentionDays;
  mailIdentity?: string;
  baseUrl?: string;
  webAclArn?: string;
  /** A web ACL the stack creates (region us-east-1 only): requests per address per 5 minutes, by kind. */
  waf?: Record<keyof typeof PER_ADDRESS_LIMITS, number>;
  renderThrottle?: { rateLimit: number; burstLimit: number };
  /** Functions without an entry run unreserved. */
  reservedConcurrency: Partial<Record<FunctionGroup | WorkerName, number>>;
  /** Functions without an entry take their class's memory. */
  memoryMb: Partial<Record<FunctionGroup | WorkerName, number>>;
  /** Daily AWS Backup of the table; absent: none. */
  backup?: { retentionDays: number };
  originSecretVersion?: string;
  throttle: { rateLimit: number; burstLimit: number };
  /** Operations (infra/operations.ts, infra/workers.ts). */
  alarmEmail?: string;
  tracing: boolean;
  xraySamplingPercent: number;
  platformLogs: boolean;
  apiAccessLog: boolean;
  reconcileEveryMinutes: number;
  eventArchiveDays: number;
  /** The step of the move from the first indexes (infra/index-move.ts); absent: done, or never needed. */
  legacyIndexes?: string;
}

/**
 * The settings the stack reads, with each stage's defaults where the file is silent; `production` (the
 * stage's `deployment.production`, lib/platform/config/schema.ts isProduction) turns on tracing, backups and
 * the reserved concurrency.
 */
export function infraSettingsOf(infra: InfraFile, stage: string, production: boolean): InfraSettings {
  const retainData = infra.retain_data ?? !['local', 'dev'].includes(stage);
  return {
    ...(infra.account ? { account: infra.account } : {}),
    ...(infra.region ? { region: infra.region } : {}),
    ...(infra.domain_name && infra.certificate_arn
      ? {
          domain: {
            name: infra.domain_name,
            certificateArn: infra.certificate_arn,
            ...(infra.hosted_zone_id ? { hostedZoneId: infra.hosted_zone_id } : {}),
          },
        }
      : {}),
    corsOrigins: infra.cors_origins,
    retainData,
    logRetentionDays: (infra.log_retention_days ??
      (retainData ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH)) as RetentionDays,
    throttle: throttleSettings(infra.throttle),
    ...(infra.alarm_email ? { alarmEmail: infra.alarm_email } : {}),
    tracing: infra.tracing ?? production,
    xraySamplingPercent: infra.xray_sampling_percent,
    platformLogs: infra.platform_logs ?? !production,
    apiAccessLog: infra.api_access_log ?? !production,
    reconcileEveryMinutes: infra.reconcile_every_minutes,
    eventArchiveDays: infra.event_archive_days ?? (retainData ? 365 : 30),
    ...(infra.mail_identity ? { mailIdentity: infra.mail_identity } : {}),
    ...(infra.base_url ? { baseUrl: infra.base_url.replace(/\/+$/, '') } : {}),
    ...(infra.web_acl_arn ? { webAclArn: infra.web_acl_arn } : {}),
    ...wafOf(infra, production),
    ...(infra.render_throttle ? { renderThrottle: throttleSettings(infra.render_throttle) } : {}),
    ...costSettingsOf(infra),
    reservedConcurrency: reservedConcurrencyOf(infra, production),
    memoryMb: { ...infra.memory_mb },
    ...backupOf(infra, production),
    ...(infra.origin_secret_version ? { originSecretVersion: infra.origin_secret_version } : {}),
    ...(infra.legacy_indexes ? { legacyIndexes: infra.legacy_indexes } : {}),
  };
}

/**
 * What the schema cannot see field by field: settings that only make sense together, or WAF and
 * concurrency settings that cannot deploy as written.
 */
export function infraProblems(infra: InfraFile, production: boolean): string[] {
  const problems: string[] = [];
  if ((infra.domain_name === undefined) !== (infra.certificate_arn === undefined))
    problems.push('infra.domain_name and infra.certificate_arn: set both or neither');
  if (infra.hosted_zone_id !== undefined && infra.domain_name === undefined)
    problems.push('infra.hosted_zone_id: needs infra.domain_name (the record it would hold)');
  if (infra.waf && infra.web_acl_arn)
    problems.push('infra.waf and infra.web_acl_arn: a distribution takes one web ACL; set one or the other');
  // A CLOUDFRONT-scoped web ACL can only be created in us-east-1, and a stack creates its resources in its
  // own region: elsewhere the ACL is made apart (in us-east-1) and attached by ARN. A prod stage has one
  // unless it says otherwise (docs/DESIGN.md 23).
  const prodWaf = production && infra.waf === undefined && !infra.web_acl_arn;
  if ((infra.waf || prodWaf) && infra.region !== CERTIFICATE_REGION)
    problems.push(
      `infra.waf: a CloudFront web ACL can only be created in ${CERTIFICATE_REGION}, and this stage ` +
        `${infra.region ? `deploys to ${infra.region}` : 'pins no region'}; create the ACL in ${CERTIFICATE_REGION} ` +
        `and set infra.web_acl_arn instead${prodWaf ? ' (or infra.waf: false to go without)' : ''} ` +
        '(docs/DEPLOYMENT.md "WAF")',
    );
  if (production) problems.push(...costProblems(infra));
  const reserved = Object.values(reservedConcurrencyOf(infra, production)).reduce<number>(
    (sum, value) => sum + (value ?? 0),
    0,
  );
  const quota = infra.lambda_concurrency_quota;
  const ceiling = quota - LAMBDA_UNRESERVED_MINIMUM;
  if (reserved > ceiling)
    problems.push(
      `infra.reserved_concurrency: ${reserved} reserved in all; Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} of an ` +
        `account's concurrency unreserved, so more than ${ceiling} cannot deploy under a quota of ${quota} ` +
        '(infra.lambda_concurrency_quota: ask for more in Service Quotas first, docs/CAPACITY.md)',
    );
  return problems;
}

function reservedConcurrencyOf(infra: InfraFile, production: boolean): InfraSettings['reservedConcurrency'] {
  return infra.reserved_concurrency ?? (production ? { ...PRODUCTION_RESERVED_CONCURRENCY } : {});
}

const throttleSettings = (throttle: InfraFile['throttle']) => ({
  rateLimit: throttle.rate_limit,
  burstLimit: throttle.burst_limit,
});

/** The stage's own web ACL: as its file says, else a prod stage's default where it can be created. */
function wafOf(infra: InfraFile, production: boolean): Pick<InfraSettings, 'waf'> {
  const settings = infra.waf ?? (production && !infra.web_acl_arn ? wafSchema.parse({}) : undefined);
  if (!settings) return {};
  const { rate_limit, render_rate_limit, original_rate_limit, code_rate_limit } = settings;
  return {
    waf: {
      all: rate_limit,
      renders: render_rate_limit,
      originals: original_rate_limit,
      codes: code_rate_limit,
    },
  };
}

function backupOf(infra: InfraFile, production: boolean): { backup?: { retentionDays: number } } {
  if (infra.backup === false) return {};
  if (infra.backup) return { backup: { retentionDays: infra.backup.retention_days } };
  return production ? { backup: { retentionDays: DEFAULT_BACKUP_RETENTION_DAYS } } : {};
}
