// Reads one stage's config file and splits it: the settings the functions receive, and the deployment's own.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';
import { WORKER_NAMES, type WorkerName } from '#functions/needs.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '#lib/http/routes.ts';
import { type AppConfig, configSchema } from '#lib/platform/config/schema.ts';
import { DEPLOYMENT_OWNED_SETTINGS } from '#lib/wiring/needs.ts';

/** Where `-c stage=<name>` finds its file, relative to the project root. */
export const STAGE_CONFIG_DIR = 'infra/config';

/** The deployment sets these itself (env overrides on every function); a stage file must not. */
const DEPLOYMENT_OWNED_KEYS = DEPLOYMENT_OWNED_SETTINGS;

/** Settings that are secrets: in a stage file they would end up readable in the Lambda environment. */
const SECRET_KEYS = [
  'admin.bootstrap.password',
  'upload.api_token',
  'payment.channel_a.private_key',
  'payment.channel_b.private_key',
  'payment.channel_b.api_v3_key',
  'payment.channel_c.key',
] as const;

const RETENTION_DAYS = new Set<number>(
  Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'),
);

// An origin is scheme + host (+ port), nothing after it: that is what browsers send in `Origin`.
const origin = z
  .string()
  .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be an origin like https://app.example.com');

// A host name: labels of letters, digits and hyphens, at least one dot (what a CloudFront alias accepts).
const hostName = z
  .string()
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    'must be a lower-case host name like api.example.com',
  );

// CloudFront takes viewer certificates only from ACM in us-east-1, whatever region the stack is in.
export const CERTIFICATE_REGION = 'us-east-1';
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:([a-z0-9-]+):\d{12}:certificate\/[A-Za-z0-9-]+$/;
const certificateArn = z
  .string()
  .regex(
    ACM_CERTIFICATE_ARN,
    'must be an ACM certificate ARN (arn:aws:acm:us-east-1:<account>:certificate/<id>)',
  )
  .refine(
    (arn) => ACM_CERTIFICATE_ARN.exec(arn)?.[1] === CERTIFICATE_REGION,
    `must be a certificate in ${CERTIFICATE_REGION} (CloudFront uses no other region's certificates)`,
  );

// CLOUDFRONT-scoped web ACLs live in us-east-1 and have `global` in their ARN.
const CLOUDFRONT_WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/[\w-]+\/[a-f0-9-]+$/;

/** Lambda keeps at least 100 of an account's concurrency unreserved; the default quota is 1000. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/**
 * What a prod stage reserves per function unless its file says otherwise (docs/DEPLOYMENT.md): each
 * function keeps capacity when another is flooded, and none can take the whole account. 160 in all, so an
 * account needs a concurrency quota of at least 260 (new accounts may start lower: ask for more first).
 */
export const PRODUCTION_RESERVED_CONCURRENCY: Record<FunctionGroup, number> = {
  auth: 50,
  upload: 40,
  files: 20,
  payments: 30,
  'payment-callback': 20,
};

/** Daily AWS Backup of the table, kept this long, on by default in prod (docs/DEPLOYMENT.md). */
export const DEFAULT_BACKUP_RETENTION_DAYS = 90;

const infraSchema = z
  .object({
    /** The AWS account this stage deploys to; pins the stack's env (required for prod). */
    account: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .optional(),
    /** The AWS region this stage deploys to; pins the stack's env (required for prod). */
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region like eu-west-1')
      .optional(),
    /** A custom domain for the distribution; needs certificate_arn. */
    domain_name: hostName.optional(),
    /** The ACM certificate (us-east-1) that covers domain_name. */
    certificate_arn: certificateArn.optional(),
    /** A Route 53 hosted zone holding domain_name: the stack then adds the alias records. */
    hosted_zone_id: z
      .string()
      .regex(/^Z[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id like Z0123456789ABCDEFGHIJ')
      .optional(),
    /** Browser origins allowed to call the API and to PUT presigned uploads into the bucket. */
    cors_origins: z.array(origin).default([]),
    /** Keep the table, bucket and key when the stack goes away; default true except local and dev. */
    retain_data: z.boolean().optional(),
    log_retention_days: z
      .number()
      .int()
      .refine(
        (days) => RETENTION_DAYS.has(days),
        'must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, ...)',
      )
      .optional(),
    /** The SES identity (domain or address) mail is sent as; default: the domain of mail.from. */
    mail_identity: z.string().trim().min(1).optional(),
    /** The public address when a custom domain fronts the distribution; default: the CloudFront URL. */
    base_url: z.url({ protocol: /^https$/ }).optional(),
    /** An existing CloudFront-scoped WAF web ACL (it lives in us-east-1) to attach to the distribution. */
    web_acl_arn: z
      .string()
      .regex(
        CLOUDFRONT_WEB_ACL_ARN,
        'must be a CLOUDFRONT-scoped web ACL ARN (arn:aws:wafv2:us-east-1:<account>:global/webacl/<name>/<id>)',
      )
      .optional(),
    /** A web ACL this stack creates, with a per-address rate rule; only for a stack pinned to us-east-1. */
    waf: z
      .object({
        /** Requests one address may make in any 5 minutes before WAF blocks it (WAF's minimum is 10). */
        rate_limit: z.number().int().min(10).max(2_000_000_000),
      })
      .strict()
      .optional(),
    /**
     * Reserved concurrency per function, API groups and workers alike (default: PRODUCTION_RESERVED_CONCURRENCY
     * in prod, none elsewhere; the workers are never reserved by default).
     */
    reserved_concurrency: z
      .partialRecord(
        z.enum([...FUNCTION_GROUPS, ...WORKER_NAMES]),
        z.number().int().min(1).max(DEFAULT_ACCOUNT_CONCURRENCY),
      )
      .optional(),
    /** Daily AWS Backup of the table (default on in prod); false turns it off. */
    backup: z
      .union([
        z.literal(false),
        z
          .object({
            retention_days: z.number().int().min(1).max(36500).default(DEFAULT_BACKUP_RETENTION_DAYS),
          })
          .strict(),
      ])
      .optional(),
    /**
     * The Secrets Manager version of the origin secret the CDN sends (docs/DEPLOYMENT.md "Rotating the
     * origin secret"); changing it is what makes CloudFormation read the secret again.
     */
    origin_secret_version: z
      .string()
      .regex(/^[A-Za-z0-9-]{32,64}$/, 'must be a Secrets Manager version id')
      .optional(),
    /** Where alarm notifications are e-mailed (an SNS subscription the address must confirm). */
    alarm_email: z.email().optional(),
    /** X-Ray tracing of every function (AWS SDK calls captured); default: on in prod only. */
    tracing: z.boolean().optional(),
    /** Minutes between payment reconciliation runs (docs/DESIGN.md 14). */
    reconcile_every_minutes: z.number().int().min(1).max(1440).default(5),
    /** Days the event bus archive keeps order.paid for replay; default 365 where data is retained, else 30. */
    event_archive_days: z.number().int().min(1).max(3650).optional(),
    throttle: z
      .object({
        rate_limit: z.number().int().min(1).default(50),
        burst_limit: z.number().int().min(1).default(100),
      })
      .prefault({}),
  })
  .strict();

/** A custom domain for the distribution: the name, its us-east-1 certificate, and optionally its zone. */
export interface DomainSettings {
  name: string;
  certificateArn: string;
  hostedZoneId?: string;
}

export interface InfraSettings {
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
  /** A web ACL the stack creates (region us-east-1 only), with this per-address limit per 5 minutes. */
  waf?: { rateLimit: number };
  /** Functions without an entry run unreserved. */
  reservedConcurrency: Partial<Record<FunctionGroup | WorkerName, number>>;
  /** Daily AWS Backup of the table; absent: none. */
  backup?: { retentionDays: number };
  originSecretVersion?: string;
  throttle: { rateLimit: number; burstLimit: number };
  /** Operations (infra/operations.ts, infra/workers.ts). */
  alarmEmail?: string;
  tracing: boolean;
  reconcileEveryMinutes: number;
  eventArchiveDays: number;
}

export interface StageConfig {
  stage: string;
  /** What every function receives as APP_CONFIG_JSON (validated by the app's schema at synth). */
  appConfig: Record<string, unknown>;
  /** The same settings as the functions will read them, for decisions the stack makes (mail, mock). */
  settings: Readonly<AppConfig>;
  infra: InfraSettings;
  /** Secret settings found in the file (names only), reported as synth warnings. */
  secretKeys: string[];
}

export class StageConfigError extends Error {
  constructor(source: string, problems: string[]) {
    super(`Invalid stage config ${source}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'StageConfigError';
  }
}

export function stageConfigFile(stage: string, root = process.cwd()): string {
  return resolve(root, STAGE_CONFIG_DIR, `${stage}.json`);
}

/** Reads `infra/config/<stage>.json`; a missing or malformed file fails the synth with its path. */
export function loadStageConfig(stage: string, root = process.cwd()): StageConfig {
  if (!/^[a-z][a-z0-9-]{0,31}$/.test(stage))
    throw new StageConfigError(stage, ['stage: must be a short lower-case name']);
  const file = stageConfigFile(stage, root);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : 'not readable JSON';
    throw new StageConfigError(file, [`${reason}`]);
  }
  return stageConfigFrom(stage, raw, file);
}

export function stageConfigFrom(stage: string, raw: unknown, source = `stage ${stage}`): StageConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new StageConfigError(source, ['must hold a JSON object']);
  }
  const { infra: rawInfra, ...rest } = structuredClone(raw) as Record<string, unknown>;
  const problems: string[] = [];

  if (rest.stage !== undefined && rest.stage !== stage)
    problems.push(`stage: is "${String(rest.stage)}" in a file for "${stage}"`);
  for (const key of DEPLOYMENT_OWNED_KEYS) {
    if (readPath(rest, key) !== undefined)
      problems.push(`${key}: is set by the deployment; remove it from the file`);
  }
  // base_url in a stage file describes the embedded server (local.json); the deployment's public address
  // is the distribution's (or infra.base_url), given to the functions as BASE_URL.
  delete rest.base_url;
  rest.stage = stage;

  const infra = infraSchema.safeParse(rawInfra ?? {});
  if (!infra.success)
    problems.push(...infra.error.issues.map((issue) => `infra.${issue.path.join('.')}: ${issue.message}`));
  const settings = configSchema().safeParse(rest);
  if (!settings.success) {
    problems.push(
      ...settings.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  if (infra.success) problems.push(...domainProblems(infra.data), ...edgeProblems(infra.data, stage));
  if (isProductionStage(stage)) problems.push(...productionProblems(rest, rawInfra));
  if (problems.length > 0 || !infra.success || !settings.success)
    throw new StageConfigError(source, problems);

  const retainData = infra.data.retain_data ?? !['local', 'dev'].includes(stage);
  return {
    stage,
    appConfig: rest,
    settings: settings.data,
    secretKeys: SECRET_KEYS.filter((key) => readPath(rest, key) !== undefined),
    infra: {
      ...(infra.data.account ? { account: infra.data.account } : {}),
      ...(infra.data.region ? { region: infra.data.region } : {}),
      ...(infra.data.domain_name && infra.data.certificate_arn
        ? {
            domain: {
              name: infra.data.domain_name,
              certificateArn: infra.data.certificate_arn,
              ...(infra.data.hosted_zone_id ? { hostedZoneId: infra.data.hosted_zone_id } : {}),
            },
          }
        : {}),
      corsOrigins: infra.data.cors_origins,
      retainData,
      logRetentionDays: (infra.data.log_retention_days ??
        (retainData ? RetentionDays.ONE_YEAR : RetentionDays.ONE_MONTH)) as RetentionDays,
      throttle: { rateLimit: infra.data.throttle.rate_limit, burstLimit: infra.data.throttle.burst_limit },
      ...(infra.data.alarm_email ? { alarmEmail: infra.data.alarm_email } : {}),
      tracing: infra.data.tracing ?? isProductionStage(stage),
      reconcileEveryMinutes: infra.data.reconcile_every_minutes,
      eventArchiveDays: infra.data.event_archive_days ?? (retainData ? 365 : 30),
      ...(infra.data.mail_identity ? { mailIdentity: infra.data.mail_identity } : {}),
      ...(infra.data.base_url ? { baseUrl: infra.data.base_url.replace(/\/+$/, '') } : {}),
      ...(infra.data.web_acl_arn ? { webAclArn: infra.data.web_acl_arn } : {}),
      ...(infra.data.waf ? { waf: { rateLimit: infra.data.waf.rate_limit } } : {}),
      reservedConcurrency: reservedConcurrencyOf(infra.data, stage),
      ...backupOf(infra.data, stage),
      ...(infra.data.origin_secret_version ? { originSecretVersion: infra.data.origin_secret_version } : {}),
    },
  };
}

/** The stage whose synth refuses anything that would be unsafe with real users. */
export function isProductionStage(stage: string): boolean {
  return stage === 'prod';
}

function domainProblems(infra: z.infer<typeof infraSchema>): string[] {
  const problems: string[] = [];
  if ((infra.domain_name === undefined) !== (infra.certificate_arn === undefined))
    problems.push('infra.domain_name and infra.certificate_arn: set both or neither');
  if (infra.hosted_zone_id !== undefined && infra.domain_name === undefined)
    problems.push('infra.hosted_zone_id: needs infra.domain_name (the record it would hold)');
  return problems;
}

function reservedConcurrencyOf(
  infra: z.infer<typeof infraSchema>,
  stage: string,
): Partial<Record<FunctionGroup | WorkerName, number>> {
  return (
    infra.reserved_concurrency ?? (isProductionStage(stage) ? { ...PRODUCTION_RESERVED_CONCURRENCY } : {})
  );
}

function backupOf(infra: z.infer<typeof infraSchema>, stage: string): { backup?: { retentionDays: number } } {
  if (infra.backup === false) return {};
  if (infra.backup) return { backup: { retentionDays: infra.backup.retention_days } };
  return isProductionStage(stage) ? { backup: { retentionDays: DEFAULT_BACKUP_RETENTION_DAYS } } : {};
}

/** WAF and concurrency settings that cannot deploy as written. */
function edgeProblems(infra: z.infer<typeof infraSchema>, stage: string): string[] {
  const problems: string[] = [];
  if (infra.waf && infra.web_acl_arn)
    problems.push('infra.waf and infra.web_acl_arn: a distribution takes one web ACL; set one or the other');
  // A CLOUDFRONT-scoped web ACL can only be created in us-east-1, and a stack creates its resources in its
  // own region: elsewhere the ACL is made apart (in us-east-1) and attached by ARN.
  if (infra.waf && infra.region !== CERTIFICATE_REGION)
    problems.push(
      `infra.waf: a CloudFront web ACL can only be created in ${CERTIFICATE_REGION}, and this stage ` +
        `${infra.region ? `deploys to ${infra.region}` : 'pins no region'}; create the ACL in ${CERTIFICATE_REGION} ` +
        'and set infra.web_acl_arn instead (docs/DEPLOYMENT.md "WAF")',
    );
  const reserved = Object.values(reservedConcurrencyOf(infra, stage)).reduce<number>(
    (sum, value) => sum + (value ?? 0),
    0,
  );
  const ceiling = DEFAULT_ACCOUNT_CONCURRENCY - LAMBDA_UNRESERVED_MINIMUM;
  if (reserved > ceiling)
    problems.push(
      `infra.reserved_concurrency: ${reserved} reserved in all; Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} of an ` +
        `account's concurrency unreserved, so more than ${ceiling} cannot deploy under the default quota`,
    );
  return problems;
}

/**
 * What a prod stage must not synthesize without, read from the raw file so that every problem is named
 * at once, even beside schema errors (a malformed account or region is the schema's problem to name).
 */
function productionProblems(settings: Record<string, unknown>, rawInfra: unknown): string[] {
  const problems: string[] = [];
  const infra = (typeof rawInfra === 'object' && rawInfra !== null ? rawInfra : {}) as Record<
    string,
    unknown
  >;
  if (readPath(settings, 'mail.from') === undefined)
    problems.push(
      'mail.from: a prod stage must send mail through SES; without it verification codes are written to the logs',
    );
  if (readPath(settings, 'payment.mock.enabled') === true)
    problems.push(
      'payment.mock.enabled: must be false in a prod stage (the mock cashier settles without payment)',
    );
  if (infra.account === undefined)
    problems.push('infra.account: a prod stage must pin the 12-digit AWS account it deploys to');
  if (infra.region === undefined)
    problems.push('infra.region: a prod stage must pin the AWS region it deploys to');
  const origins = Array.isArray(infra.cors_origins) ? infra.cors_origins : [];
  const insecure = origins.filter((value) => typeof value !== 'string' || !value.startsWith('https://'));
  if (insecure.length > 0)
    problems.push(`infra.cors_origins: a prod stage allows https origins only, not ${insecure.join(', ')}`);
  return problems;
}

function readPath(target: Record<string, unknown>, path: string): unknown {
  let node: unknown = target;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
