// Evaluates one function's identity policy (resolved statements of the synthesized template) the way IAM does.

export interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  Resource?: string | string[];
  NotAction?: unknown;
  NotResource?: unknown;
  Condition?: unknown;
  Principal?: unknown;
  Sid?: string;
}

function nameOf(statement: PolicyStatement, index?: number): string {
  const where = statement.Sid ? `Sid ${statement.Sid}` : index === undefined ? 'statement' : `#${index}`;
  return `${where} ${JSON.stringify(statement)}`;
}

function listOf(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/**
 * What a request says of itself that a condition may test: DynamoDB's `dynamodb:LeadingKeys`, an S3
 * listing's `s3:prefix`.
 */
export type CallContext = Partial<Record<'dynamodb:LeadingKeys', string[]>> &
  Partial<Record<'s3:prefix', string>>;

/** `StringLike` on `s3:prefix` (the bandwidth worker's listing of the CDN's logs): its patterns. */
function prefixPatterns(condition: unknown): string[] | undefined {
  const operators = typeof condition === 'object' && condition !== null ? Object.entries(condition) : [];
  const [operator, keys] = operators.length === 1 ? operators[0]! : [];
  const tests = typeof keys === 'object' && keys !== null ? Object.entries(keys) : [];
  if (operator !== 'StringLike' || tests.length !== 1) return undefined;
  const [name, patterns] = tests[0]!;
  const list = listOf(patterns as string | string[]);
  return name === 's3:prefix' && list.every((item) => typeof item === 'string') ? list : undefined;
}

/** The conditions modelled: `ForAllValues:StringLike` on `dynamodb:LeadingKeys` (the render function's). */
function leadingKeyPatterns(condition: unknown): string[] | undefined {
  const operators = typeof condition === 'object' && condition !== null ? Object.entries(condition) : [];
  const [operator, keys] = operators.length === 1 ? operators[0]! : [];
  const tests = typeof keys === 'object' && keys !== null ? Object.entries(keys) : [];
  if (operator !== 'ForAllValues:StringLike' || tests.length !== 1) return undefined;
  const [name, patterns] = tests[0]!;
  const list = listOf(patterns as string | string[]);
  return name === 'dynamodb:LeadingKeys' && list.every((item) => typeof item === 'string') ? list : undefined;
}

/**
 * Throws on statements this evaluator does not model. Our stack has none of these; evaluating them as if
 * the condition held (or as if NotAction were Action) would hide exactly the bugs this exists to catch.
 */
export function assertSupported(statements: readonly PolicyStatement[]): void {
  statements.forEach((statement, index) => {
    for (const key of ['Condition', 'NotAction', 'NotResource'] as const) {
      if (
        key === 'Condition' &&
        (leadingKeyPatterns(statement.Condition) || prefixPatterns(statement.Condition))
      )
        continue;
      if (statement[key] !== undefined) {
        throw new Error(`IAM statement ${nameOf(statement, index)} uses ${key}, which is not supported here`);
      }
    }
    // An identity policy has no Principal: one here means a resource policy was passed in by mistake.
    if (statement.Principal !== undefined) {
      throw new Error(`IAM statement ${nameOf(statement, index)} has a Principal: not an identity policy`);
    }
    if (statement.Effect !== 'Allow' && statement.Effect !== 'Deny') {
      throw new Error(`IAM statement ${nameOf(statement, index)} has no valid Effect`);
    }
    if (listOf(statement.Action).length === 0 || listOf(statement.Resource).length === 0) {
      throw new Error(`IAM statement ${nameOf(statement, index)} lacks Action or Resource`);
    }
    for (const value of [...listOf(statement.Action), ...listOf(statement.Resource)]) {
      if (typeof value !== 'string') {
        throw new Error(
          `IAM statement ${nameOf(statement, index)} holds a non-string (unresolved intrinsic?)`,
        );
      }
    }
  });
}

/** `*` is any run of characters (slashes and colons included), `?` exactly one. */
function globMatches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

/** The six ARN segments; the last keeps its colons (`log-group:name:*`). */
function arnSegments(arn: string): string[] | undefined {
  const parts = arn.split(':');
  if (parts.length < 6 || parts[0] !== 'arn') return undefined;
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
}

/**
 * IAM compares a resource ARN segment by segment, so a wildcard never spans a colon between the first five
 * segments; within the last (resource) segment it does span slashes (`arn:aws:s3:::b/*` covers `b/x/y`).
 */
function resourceMatches(pattern: string, resource: string): boolean {
  if (pattern === '*') return true;
  const wanted = arnSegments(pattern);
  if (!wanted) throw new Error(`IAM resource pattern ${pattern} is neither "*" nor an ARN`);
  const actual = arnSegments(resource);
  if (!actual) return false;
  return wanted.every((segment, index) => globMatches(segment, actual[index] ?? '', false));
}

/**
 * ForAllValues: every leading key of the request matches a pattern; a request naming none passes, as in
 * IAM (a Query or Scan has no leading keys in its context).
 */
function conditionHolds(statement: PolicyStatement, context: CallContext): boolean {
  if (statement.Condition === undefined) return true;
  const prefixes = prefixPatterns(statement.Condition);
  if (prefixes) {
    const prefix = context['s3:prefix'];
    return prefix !== undefined && prefixes.some((pattern) => globMatches(pattern, prefix, false));
  }
  const patterns = leadingKeyPatterns(statement.Condition) ?? [];
  return (context['dynamodb:LeadingKeys'] ?? []).every((key) =>
    patterns.some((pattern) => globMatches(pattern, key, false)),
  );
}

function statementCovers(
  statement: PolicyStatement,
  action: string,
  resource: string,
  context: CallContext,
): boolean {
  return (
    listOf(statement.Action).some((pattern) => globMatches(pattern, action, true)) &&
    listOf(statement.Resource).some((pattern) => resourceMatches(pattern, resource)) &&
    conditionHolds(statement, context)
  );
}

/** IAM evaluation of one identity policy: an explicit Deny wins, else some Allow must cover the call. */
export function isAllowed(
  statements: readonly PolicyStatement[],
  action: string,
  resource: string,
  context: CallContext = {},
): boolean {
  assertSupported(statements);
  let allowed = false;
  for (const statement of statements) {
    if (!statementCovers(statement, action, resource, context)) continue;
    if (statement.Effect === 'Deny') return false;
    allowed = true;
  }
  return allowed;
}

/** The message AWS puts in an AccessDenied answer, with the function standing in for the assumed role. */
export function describeDenial(functionName: string, action: string, resource: string): string {
  return `User: ${functionName} is not authorized to perform: ${action} on resource: ${resource}`;
}
