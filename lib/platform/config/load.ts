// Reads the settings once: JSON file (or inline JSON), then per-key environment overrides, then one validation
// by the zod schema (schema.ts), whose issues name each problem.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type AppConfig, configSchema } from './schema.ts';

export const DEFAULT_CONFIG_FILE = 'infra/config/local.json';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type LeafKind = 'string' | 'number' | 'boolean' | 'json';
const LEAF_KINDS: Partial<Record<string, LeafKind>> = { number: 'number', boolean: 'boolean', array: 'json' };

/** What a node of the schema is made of, as zod keeps it (only the parts the leaves are read from). */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
}

/** Every settable key of the schema, as dotted paths, with how an environment string becomes its value. */
export function configLeaves(): Map<string, LeafKind> {
  leavesOfSchema ??= collectLeaves(configSchema._zod.def, '', new Map());
  return leavesOfSchema;
}

let leavesOfSchema: Map<string, LeafKind> | undefined;

function collectLeaves(def: SchemaDef, prefix: string, leaves: Map<string, LeafKind>): Map<string, LeafKind> {
  const inner = unwrap(def);
  if (inner.type === 'object' && inner.shape) {
    for (const [key, child] of Object.entries(inner.shape))
      collectLeaves(child._zod.def, prefix ? `${prefix}.${key}` : key, leaves);
    return leaves;
  }
  leaves.set(prefix, LEAF_KINDS[inner.type] ?? 'string');
  return leaves;
}

/** Through defaults, optionals and pipes to the schema that takes the input. */
function unwrap(def: SchemaDef): SchemaDef {
  let current = def;
  for (;;) {
    const next = current.innerType ?? current.in;
    if (!next) return current;
    current = next._zod.def;
  }
}

/** `payment.channel_b.api_v3_key` -> `PAYMENT__CHANNEL_B__API_V3_KEY` (docs/DESIGN.md 3). */
export function envNameOf(path: string): string {
  return path.toUpperCase().replaceAll('.', '__');
}

function coerce(kind: LeafKind, raw: string): unknown {
  if (kind === 'string') return raw;
  if (kind === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    return raw; // left as text so validation names the key
  }
  if (kind === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  try {
    return JSON.parse(raw);
  } catch {
    // A comma list is the friendlier way to write an array in an environment variable.
    return raw.split(',').map((item) => item.trim());
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

export interface LoadConfigOptions {
  env?: Record<string, string | undefined>;
  /** Working directory the default config file path is resolved against. */
  cwd?: string;
}

/**
 * The settings as given, before validation: the JSON in `APP_CONFIG_JSON` (how the deployed functions
 * receive their stage file) or the file named by `APP_CONFIG` (default infra/config/local.json when
 * present), then one environment variable per key (later wins); with the problems met reading them.
 */
export function readRawSettings({ env = process.env, cwd = process.cwd() }: LoadConfigOptions = {}): {
  raw: Record<string, unknown>;
  problems: string[];
} {
  const problems: string[] = [];
  let raw: Record<string, unknown> = {};
  if (env.APP_CONFIG_JSON) {
    raw = parseJsonObject(env.APP_CONFIG_JSON, 'APP_CONFIG_JSON', problems);
  } else {
    const file = resolve(cwd, env.APP_CONFIG ?? DEFAULT_CONFIG_FILE);
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      // Without APP_CONFIG a missing default file simply means "defaults and environment only".
      if (env.APP_CONFIG || !missing)
        problems.push(`APP_CONFIG: cannot read ${file} (${missing ? 'not found' : 'unreadable'})`);
    }
    if (text !== undefined) raw = parseJsonObject(text, file, problems);
  }

  for (const [path, kind] of configLeaves()) {
    const value = env[envNameOf(path)];
    if (value !== undefined) setPath(raw, path, coerce(kind, value));
  }
  // Lambda provides its region this way; an explicit AWS__REGION still wins.
  if (env.AWS_REGION && env.AWS__REGION === undefined) setPath(raw, 'aws.region', env.AWS_REGION);
  return { raw, problems };
}

/** Loads and validates the whole configuration (sources: readRawSettings). */
export function loadConfig(options: LoadConfigOptions = {}): Readonly<AppConfig> {
  const { raw, problems } = readRawSettings(options);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.') || '(root)';
      problems.push(`${key}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return deepFreeze(parsed.data);
}

function parseJsonObject(text: string, source: string, problems: string[]): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
    problems.push(`${source}: must hold a JSON object`);
  } catch {
    problems.push(`${source}: is not valid JSON`);
  }
  return {};
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
