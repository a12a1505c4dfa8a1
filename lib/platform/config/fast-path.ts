// The cold-start check of the settings: the schema's shape (shape.generated.ts) applied to the input with
// the same semantics as zod (defaults, prefaults, trims, formats, ranges, the rules in rules.ts), without
// building any zod schema. It only vouches: it answers the parsed settings when every rule holds, and
// `undefined` at the first doubt, after which load.ts asks the zod schema itself, which names the problems.
// So the messages are zod's, and test/unit/config-shape.test.ts checks that whatever this path accepts, zod
// accepts with the same result (docs/PERFORMANCE.md "Configuration at a cold start").
import { stripTabAndNewline, urlHostnameOk, urlProtocolOk, validateURL } from 'zod/v4/core';
import { RULES } from './rules.ts';
import type { ShapeNode, StringCheck } from './shape.ts';

/** A value the shape could not vouch for. */
const DOUBT = Symbol('doubt');
type Outcome = unknown;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const regexCache = new Map<string, RegExp>();
function regex(source: string, flags = ''): RegExp {
  const key = `${flags}/${source}`;
  let found = regexCache.get(key);
  if (!found) {
    found = new RegExp(source, flags);
    regexCache.set(key, found);
  }
  found.lastIndex = 0;
  return found;
}

/** A default's own copy, as zod gives one (a frozen result must not freeze the shape's values). */
function copyOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyOf);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copyOf(inner)]));
  }
  return value;
}

/** The parsed settings, or undefined when the shape cannot vouch for `input`. */
export function parseByShape(node: ShapeNode, input: unknown): unknown {
  const result = run(node, input);
  return result === DOUBT ? undefined : result;
}

function run(node: ShapeNode, value: unknown): Outcome {
  switch (node.type) {
    case 'default':
      return value === undefined ? copyOf(node.value) : run(node.inner, value);
    case 'prefault':
      return run(node.inner, value === undefined ? copyOf(node.value) : value);
    case 'optional':
      return value === undefined ? undefined : run(node.inner, value);
    case 'pipe': {
      const first = run(node.in, value);
      return first === DOUBT ? DOUBT : run(node.out, first);
    }
    case 'transform':
      return RULES[node.rule](value as never);
    case 'object':
      return runObject(node, value);
    case 'boolean':
      return typeof value === 'boolean' ? value : DOUBT;
    case 'enum':
      return typeof value === 'string' && node.values.includes(value) ? value : DOUBT;
    case 'number':
      return runNumber(node, value);
    case 'string':
      return runString(node, value);
    case 'array': {
      if (!Array.isArray(value)) return DOUBT;
      if (node.minLength !== undefined && value.length < node.minLength) return DOUBT;
      const out: unknown[] = [];
      for (const element of value) {
        const parsed = run(node.element, element);
        if (parsed === DOUBT || parsed === undefined) return DOUBT;
        out.push(parsed);
      }
      return out;
    }
  }
}

function runObject(node: Extract<ShapeNode, { type: 'object' }>, value: unknown): Outcome {
  if (!isPlainObject(value)) return DOUBT;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node.shape)) {
    const present = Object.hasOwn(value, key);
    const parsed = run(child, value[key]);
    if (parsed === DOUBT) return DOUBT;
    // As zod: a key absent from the input stays absent when nothing took its place.
    if (parsed !== undefined || present) out[key] = parsed;
  }
  for (const rule of node.rules) if (!RULES[rule](out as never)) return DOUBT;
  return out;
}

function runNumber(node: Extract<ShapeNode, { type: 'number' }>, value: unknown): Outcome {
  if (typeof value !== 'number' || !Number.isFinite(value)) return DOUBT;
  if (node.int && !Number.isSafeInteger(value)) return DOUBT;
  if (node.min && (node.min.inclusive ? value < node.min.value : value <= node.min.value)) return DOUBT;
  if (node.max && (node.max.inclusive ? value > node.max.value : value >= node.max.value)) return DOUBT;
  return value;
}

function runString(node: Extract<ShapeNode, { type: 'string' }>, input: unknown): Outcome {
  if (typeof input !== 'string') return DOUBT;
  let value = input;
  if (node.url) {
    // zod's own URL check (its functions, the same order).
    const trimmed = value.trim();
    const def = {
      ...(node.url.protocol ? { protocol: regex(node.url.protocol) } : {}),
      ...(node.url.hostname ? { hostname: regex(node.url.hostname) } : {}),
      ...(node.url.normalize ? { normalize: true } : {}),
    };
    const url = validateURL(trimmed, def);
    if (typeof url === 'number') return DOUBT;
    if (url === true) {
      value = stripTabAndNewline(trimmed);
    } else {
      if (def.hostname && !urlHostnameOk(url, def.hostname)) return DOUBT;
      if (def.protocol && !urlProtocolOk(url, def.protocol)) return DOUBT;
      value = def.normalize ? url.href : stripTabAndNewline(trimmed);
    }
  }
  for (const check of node.checks) {
    const next = applyCheck(check, value);
    if (next === DOUBT) return DOUBT;
    value = next as string;
  }
  return value;
}

function applyCheck(check: StringCheck, value: string): Outcome {
  switch (check.check) {
    case 'trim':
      return value.trim();
    case 'min_length':
      return value.length >= check.value ? value : DOUBT;
    case 'max_length':
      return value.length <= check.value ? value : DOUBT;
    case 'pattern':
      return regex(check.source, check.flags).test(value) ? value : DOUBT;
    case 'rule':
      return RULES[check.rule](value as never) ? value : DOUBT;
  }
}
