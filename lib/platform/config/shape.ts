// The settings' schema as data: what the cold-start fast path (fast-path.ts) checks and fills in without
// building a single zod schema. `describeSchema` reads it off the zod schema (schema.ts); the result is
// kept in shape.generated.ts (`npm run generate:config` writes it; test/unit/config-shape.test.ts fails
// when it is stale). Every kind of schema or check the service's settings use is described here; any other
// makes the generation fail, so the fast path never silently skips a rule.
import { fileURLToPath } from 'node:url';
import type * as z from '#lib/platform/zod.ts';
import { RULES, type RuleName } from './rules.ts';
import { configSchema } from './schema.ts';

export type StringCheck =
  | { check: 'trim' }
  | { check: 'min_length'; value: number }
  | { check: 'max_length'; value: number }
  | { check: 'pattern'; source: string; flags: string }
  | { check: 'rule'; rule: RuleName };

export type ShapeNode =
  | { type: 'object'; shape: Record<string, ShapeNode>; rules: RuleName[] }
  | { type: 'default'; value: unknown; inner: ShapeNode }
  | { type: 'prefault'; value: unknown; inner: ShapeNode }
  | { type: 'optional'; inner: ShapeNode }
  | { type: 'pipe'; in: ShapeNode; out: ShapeNode }
  | { type: 'transform'; rule: RuleName }
  | {
      type: 'string';
      /** zod's URL format: protocol and hostname patterns (sources), normalize flag. */
      url?: { protocol?: string; hostname?: string; normalize: boolean };
      checks: StringCheck[];
    }
  | {
      type: 'number';
      int: boolean;
      min?: { value: number; inclusive: boolean };
      max?: { value: number; inclusive: boolean };
    }
  | { type: 'boolean' }
  | { type: 'enum'; values: string[] }
  | { type: 'array'; element: ShapeNode; minLength?: number };

interface Def {
  type: string;
  [key: string]: unknown;
}
const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

function ruleNamed(fn: unknown, where: string): RuleName {
  const found = (Object.keys(RULES) as RuleName[]).find((name) => RULES[name] === fn);
  if (!found) throw new Error(`${where}: a refinement or transform not in lib/platform/config/rules.ts`);
  return found;
}

const patternOf = (pattern: unknown) => {
  const regex = pattern as RegExp;
  return { source: regex.source, flags: regex.flags };
};

function checksOf(def: Def): Def[] {
  return ((def.checks as unknown[] | undefined) ?? []).map((check) => defOf(check));
}

/** The shape of one zod schema; throws on anything the fast path does not know. */
export function describeSchema(schema: z.ZodMiniType, where = '(root)'): ShapeNode {
  const def = defOf(schema);
  switch (def.type) {
    case 'object': {
      const shape: Record<string, ShapeNode> = {};
      for (const [key, child] of Object.entries(def.shape as Record<string, z.ZodMiniType>))
        shape[key] = describeSchema(child, where === '(root)' ? key : `${where}.${key}`);
      const rules = checksOf(def).map((check) => {
        if (check.check !== 'custom') throw new Error(`${where}: object check ${String(check.check)}`);
        return ruleNamed(check.fn, where);
      });
      return { type: 'object', shape, rules };
    }
    case 'default':
    case 'prefault':
      return {
        type: def.type,
        value: structuredClone(def.defaultValue),
        inner: describeSchema(def.innerType as z.ZodMiniType, where),
      };
    case 'optional':
      return { type: 'optional', inner: describeSchema(def.innerType as z.ZodMiniType, where) };
    case 'pipe':
      return {
        type: 'pipe',
        in: describeSchema(def.in as z.ZodMiniType, where),
        out: describeSchema(def.out as z.ZodMiniType, where),
      };
    case 'transform':
      return { type: 'transform', rule: ruleNamed(def.transform, where) };
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return { type: 'enum', values: Object.values(def.entries as Record<string, string>) };
    case 'string':
      return describeString(def, where);
    case 'number':
      return describeNumber(def, where);
    case 'array': {
      let minLength: number | undefined;
      for (const check of checksOf(def)) {
        if (check.check !== 'min_length') throw new Error(`${where}: array check ${String(check.check)}`);
        minLength = check.minimum as number;
      }
      return {
        type: 'array',
        element: describeSchema(def.element as z.ZodMiniType, `${where}[]`),
        ...(minLength === undefined ? {} : { minLength }),
      };
    }
    default:
      throw new Error(`${where}: schema type ${def.type} is not described (lib/platform/config/shape.ts)`);
  }
}

function describeString(def: Def, where: string): ShapeNode {
  const checks: StringCheck[] = [];
  let url: { protocol?: string; hostname?: string; normalize: boolean } | undefined;
  // A string format (z.url(), z.email()) is the schema's own first check.
  if (def.format === 'url') {
    url = {
      ...(def.protocol ? { protocol: (def.protocol as RegExp).source } : {}),
      ...(def.hostname ? { hostname: (def.hostname as RegExp).source } : {}),
      normalize: Boolean(def.normalize),
    };
  } else if (def.format === 'email') {
    checks.push({ check: 'pattern', ...patternOf(def.pattern) });
  } else if (def.format !== undefined) {
    throw new Error(`${where}: string format ${String(def.format)}`);
  }
  for (const check of checksOf(def)) {
    if (check.check === 'overwrite') {
      const tx = check.tx as (value: string) => string;
      // z.trim() is an anonymous overwrite: recognised by what it does.
      if (tx('  a b\t') !== 'a b' || tx('x') !== 'x')
        throw new Error(`${where}: an overwrite other than trim`);
      checks.push({ check: 'trim' });
    } else if (check.check === 'min_length') {
      checks.push({ check: 'min_length', value: check.minimum as number });
    } else if (check.check === 'max_length') {
      checks.push({ check: 'max_length', value: check.maximum as number });
    } else if (check.check === 'string_format' && check.format === 'regex') {
      checks.push({ check: 'pattern', ...patternOf(check.pattern) });
    } else if (check.check === 'custom') {
      checks.push({ check: 'rule', rule: ruleNamed(check.fn, where) });
    } else {
      throw new Error(`${where}: string check ${String(check.check)} ${String(check.format ?? '')}`);
    }
  }
  return { type: 'string', ...(url ? { url } : {}), checks };
}

function describeNumber(def: Def, where: string): ShapeNode {
  const node: Extract<ShapeNode, { type: 'number' }> = { type: 'number', int: false };
  for (const check of checksOf(def)) {
    if (check.check === 'number_format' && check.format === 'safeint') node.int = true;
    else if (check.check === 'greater_than')
      node.min = { value: check.value as number, inclusive: Boolean(check.inclusive) };
    else if (check.check === 'less_than')
      node.max = { value: check.value as number, inclusive: Boolean(check.inclusive) };
    else throw new Error(`${where}: number check ${String(check.check)} ${String(check.format ?? '')}`);
  }
  return node;
}

/** Where the described shape of the settings is kept (read by load.ts at every cold start). */
export const SHAPE_FILE = fileURLToPath(new URL('./shape.json', import.meta.url));

/** The shape of the settings' schema as it stands now. */
export function currentConfigShape(): ShapeNode {
  return describeSchema(configSchema());
}
