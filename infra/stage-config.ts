// Reads one stage's config file and splits it: the settings the functions receive, and the deployment's own.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type AppConfig, configSchema, isProduction } from '#lib/platform/config/schema.ts';
import { DEPLOYMENT_OWNED_SETTINGS } from '#lib/wiring/needs.ts';
import { queriedIndexesAt } from './index-move.ts';
import { type InfraSettings, infraProblems, infraSchema, infraSettingsOf } from './infra-settings.ts';

/** Where `-c stage=<name>` finds its file, relative to the project root. */
export const STAGE_CONFIG_DIR = 'infra/config';

/** Settings that are secrets: in a stage file they would end up readable in the Lambda environment. */
const SECRET_KEYS = [
  'admin.bootstrap.password',
  'upload.api_token',
  'auth.challenge.turnstile.secret_key',
  'payment.channel_a.private_key',
  'payment.channel_b.private_key',
  'payment.channel_b.api_v3_key',
  'payment.channel_c.key',
] as const;

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
    throw new StageConfigError(file, [reason]);
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
  // The deployment sets these itself (env overrides on every function); a stage file must not.
  for (const key of DEPLOYMENT_OWNED_SETTINGS) {
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
  // Which index the functions query follows the step of infra.legacy_indexes, never the file.
  if (rest.table_indexes !== undefined)
    problems.push(
      'table_indexes: is set by the deployment from infra.legacy_indexes; remove it from the file',
    );
  const queried = infra.success ? queriedIndexesAt(infra.data.legacy_indexes) : {};
  if (Object.keys(queried).length > 0) rest.table_indexes = queried;
  const settings = configSchema.safeParse(rest);
  if (!settings.success) {
    problems.push(
      ...settings.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  // Read from the file as written, so a production stage's problems are named even beside schema errors.
  const flag = readPath(rest, 'deployment.production');
  const production = isProduction({
    stage,
    deployment: { production: typeof flag === 'boolean' ? flag : undefined },
  });
  if (infra.success) problems.push(...infraProblems(infra.data, production));
  if (production) problems.push(...productionProblems(rest, rawInfra));
  if (problems.length > 0 || !infra.success || !settings.success)
    throw new StageConfigError(source, problems);

  return {
    stage,
    appConfig: rest,
    settings: settings.data,
    secretKeys: SECRET_KEYS.filter((key) => readPath(rest, key) !== undefined),
    infra: infraSettingsOf(infra.data, stage, production),
  };
}

/**
 * What a production stage (`deployment.production`, or named prod or production without it) must not
 * synthesize without, read from the raw file so that every problem is named at once, even beside schema
 * errors (a malformed account or region is the schema's problem to name).
 */
function productionProblems(settings: Record<string, unknown>, rawInfra: unknown): string[] {
  const problems: string[] = [];
  const infra = (typeof rawInfra === 'object' && rawInfra !== null ? rawInfra : {}) as Record<
    string,
    unknown
  >;
  if (readPath(settings, 'mail.from') === undefined)
    problems.push(
      'mail.from: a production stage must send mail through SES; without it verification codes are written to the logs',
    );
  if (readPath(settings, 'payment.mock.enabled') === true)
    problems.push(
      'payment.mock.enabled: must be false in a production stage (the mock cashier settles without payment)',
    );
  if (infra.account === undefined)
    problems.push('infra.account: a production stage must pin the 12-digit AWS account it deploys to');
  if (infra.region === undefined)
    problems.push('infra.region: a production stage must pin the AWS region it deploys to');
  const origins = Array.isArray(infra.cors_origins) ? infra.cors_origins : [];
  const insecure = origins.filter((value) => typeof value !== 'string' || !value.startsWith('https://'));
  if (insecure.length > 0)
    problems.push(
      `infra.cors_origins: a production stage allows https origins only, not ${insecure.join(', ')}`,
    );
  const providers = readPath(settings, 'auth.providers');
  for (const [index, provider] of (Array.isArray(providers) ? providers : []).entries()) {
    const { client_secret: secret, issuer } = (provider ?? {}) as Record<string, unknown>;
    if (secret !== undefined)
      problems.push(
        `auth.providers.${index}.client_secret: a production stage keeps client secrets in Secrets Manager (secret_id)`,
      );
    if (typeof issuer === 'string' && !issuer.startsWith('https://'))
      problems.push(`auth.providers.${index}.issuer: a production stage trusts https issuers only`);
  }
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
