// Resolves CloudFormation intrinsics in synthesized template values (policy documents, environments).

export const PSEUDO_PARAMETERS = [
  'AWS::Region',
  'AWS::AccountId',
  'AWS::Partition',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
] as const;
export type PseudoParameter = (typeof PSEUDO_PARAMETERS)[number];

export interface IntrinsicResolver {
  ref(logicalId: string): string;
  getAtt(logicalId: string, attribute: string): string;
  /** Values of `Ref: AWS::*`; a pseudo parameter missing here goes to `ref` (which may know it or throw). */
  pseudo?: Partial<Record<PseudoParameter, string>>;
}

export type Resolved = string | number | boolean | null | Resolved[] | { [key: string]: Resolved };

/** The pseudo parameters of a stack deployed as `stackName` into `account`/`region` of the aws partition. */
export function pseudoParameters(where: {
  region: string;
  account: string;
  stackName: string;
}): Record<PseudoParameter, string> {
  return {
    'AWS::Region': where.region,
    'AWS::AccountId': where.account,
    'AWS::Partition': 'aws',
    'AWS::StackName': where.stackName,
    // A fixed id: tests never deploy twice under one name.
    'AWS::StackId': `arn:aws:cloudformation:${where.region}:${where.account}:stack/${where.stackName}/00000000-0000-0000-0000-000000000000`,
    'AWS::URLSuffix': 'amazonaws.com',
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asString(value: Resolved, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new Error(`${where}: expected a string, got ${JSON.stringify(value)}`);
}

function asList(value: Resolved, where: string): Resolved[] {
  if (Array.isArray(value)) return value;
  throw new Error(`${where}: expected a list, got ${JSON.stringify(value)}`);
}

function args(value: unknown, count: number, name: string): unknown[] {
  if (!Array.isArray(value) || value.length !== count) {
    throw new Error(`${name} takes a list of ${count}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function refOf(name: string, resolver: IntrinsicResolver): string {
  if (name.startsWith('AWS::')) {
    if (!(PSEUDO_PARAMETERS as readonly string[]).includes(name)) {
      // AWS::NoValue removes a property, AWS::NotificationARNs is a list: neither occurs in our policies.
      throw new Error(`Unsupported pseudo parameter ${name}`);
    }
    const value = resolver.pseudo?.[name as PseudoParameter];
    if (value !== undefined) return value;
  }
  return resolver.ref(name);
}

function getAttOf(value: unknown, resolver: IntrinsicResolver): string {
  if (typeof value === 'string') {
    const dot = value.indexOf('.');
    if (dot <= 0) throw new Error(`Fn::GetAtt "${value}" is not "LogicalId.Attribute"`);
    return resolver.getAtt(value.slice(0, dot), value.slice(dot + 1));
  }
  const [id, attribute] = args(value, 2, 'Fn::GetAtt');
  if (typeof id !== 'string' || typeof attribute !== 'string') {
    throw new Error(`Fn::GetAtt takes [logicalId, attribute], got ${JSON.stringify(value)}`);
  }
  return resolver.getAtt(id, attribute);
}

/** `${Name}`, `${Id.Attr}` and `${!Literal}` (which stays `${Literal}`). */
function subOf(value: unknown, resolver: IntrinsicResolver): string {
  let template: string;
  let variables: Record<string, string> = {};
  if (typeof value === 'string') {
    template = value;
  } else {
    const [text, map] = args(value, 2, 'Fn::Sub');
    if (typeof text !== 'string' || !isRecord(map)) {
      throw new Error(`Fn::Sub takes [template, variables], got ${JSON.stringify(value)}`);
    }
    template = text;
    variables = Object.fromEntries(
      Object.entries(map).map(([name, item]) => [name, asString(resolveIntrinsics(item, resolver), name)]),
    );
  }
  return template.replace(/\$\{([^}]*)\}/g, (_whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    const trimmed = name.trim();
    if (Object.hasOwn(variables, trimmed)) return variables[trimmed]!;
    if (!trimmed.startsWith('AWS::') && trimmed.includes('.')) return getAttOf(trimmed, resolver);
    return refOf(trimmed, resolver);
  });
}

function intrinsic(name: string, value: unknown, resolver: IntrinsicResolver): Resolved {
  const resolve = (item: unknown) => resolveIntrinsics(item, resolver);
  switch (name) {
    case 'Ref':
      if (typeof value !== 'string') throw new Error(`Ref takes a name, got ${JSON.stringify(value)}`);
      return refOf(value, resolver);
    case 'Fn::GetAtt':
      return getAttOf(value, resolver);
    case 'Fn::Join': {
      const [separator, items] = args(value, 2, 'Fn::Join');
      if (typeof separator !== 'string') throw new Error('Fn::Join separator must be a string');
      return asList(resolve(items), 'Fn::Join')
        .map((item) => asString(item, 'Fn::Join item'))
        .join(separator);
    }
    case 'Fn::Select': {
      const [index, items] = args(value, 2, 'Fn::Select');
      const position = Number(asString(resolve(index), 'Fn::Select index'));
      const list = asList(resolve(items), 'Fn::Select');
      if (!Number.isInteger(position) || position < 0 || position >= list.length) {
        throw new Error(`Fn::Select index ${String(index)} is outside a list of ${list.length}`);
      }
      return list[position]!;
    }
    case 'Fn::Split': {
      const [separator, source] = args(value, 2, 'Fn::Split');
      if (typeof separator !== 'string') throw new Error('Fn::Split separator must be a string');
      return asString(resolve(source), 'Fn::Split source').split(separator);
    }
    case 'Fn::Sub':
      return subOf(value, resolver);
    default:
      throw new Error(`Unsupported intrinsic ${name}: ${JSON.stringify(value)}`);
  }
}

/**
 * The plain value of a template value: intrinsics replaced, objects and arrays resolved recursively.
 * Throws, naming it, on any intrinsic, logical id or attribute it cannot resolve.
 */
export function resolveIntrinsics(value: unknown, resolver: IntrinsicResolver): Resolved {
  if (Array.isArray(value)) return value.map((item) => resolveIntrinsics(item, resolver));
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) {
      return intrinsic(keys[0]!, value[keys[0]!], resolver);
    }
    return Object.fromEntries(keys.map((key) => [key, resolveIntrinsics(value[key], resolver)]));
  }
  if (value === undefined) throw new Error('Cannot resolve undefined');
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    value === null
  ) {
    return value;
  }
  throw new Error(`Cannot resolve ${typeof value}`);
}
