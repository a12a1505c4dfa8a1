// The per-address limits in front of the CDN (docs/DESIGN.md 23, docs/DEPLOYMENT.md "WAF"): a CLOUDFRONT-scoped
// web ACL of rate-based rules, one on every request and one per kind of anonymous request that costs the most.
import type { Stack } from 'aws-cdk-lib';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { PARAM_NAMES } from '#lib/files/rendition-query.ts';
import { type PER_ADDRESS_LIMITS, WAF_WINDOW_SECONDS } from './capacity.ts';

type Statement = CfnWebACL.StatementProperty;

const decoded = [{ priority: 0, type: 'URL_DECODE' }];
const imagePath: Statement = {
  byteMatchStatement: {
    fieldToMatch: { uriPath: {} },
    positionalConstraint: 'STARTS_WITH',
    searchString: '/i/',
    textTransformations: decoded,
  },
};
// A query naming a rendition parameter (the preset `p` of docs/DESIGN.md 23 among them) is a render, which
// the render function may run; any other /i/ request is served the original's bytes by the edge.
const renditionQuery: Statement = {
  regexMatchStatement: {
    fieldToMatch: { queryString: {} },
    regexString: `(^|&)(${[...new Set(['p', ...PARAM_NAMES])].join('|')})=`,
    textTransformations: decoded,
  },
};
// Registration, reset and e-mail codes: each may send a mail.
const codeRequest: Statement = {
  andStatement: {
    statements: [
      {
        byteMatchStatement: {
          fieldToMatch: { method: {} },
          positionalConstraint: 'EXACTLY',
          searchString: 'POST',
          textTransformations: [{ priority: 0, type: 'NONE' }],
        },
      },
      {
        byteMatchStatement: {
          fieldToMatch: { uriPath: {} },
          positionalConstraint: 'ENDS_WITH',
          searchString: '/code',
          textTransformations: decoded,
        },
      },
    ],
  },
};

/** What each rule counts (none: every request). */
const SCOPES: Record<keyof typeof PER_ADDRESS_LIMITS, Statement | undefined> = {
  all: undefined,
  renders: { andStatement: { statements: [imagePath, renditionQuery] } },
  originals: { andStatement: { statements: [imagePath, { notStatement: { statement: renditionQuery } }] } },
  codes: codeRequest,
};

/**
 * The web ACL (the stage config allows it only in us-east-1): each rule blocks an address over its limit
 * of requests in WAF_WINDOW_SECONDS, until its rate falls back under it. No managed rule groups: their
 * body-size and content rules would refuse legitimate uploads and channel notifications.
 */
export function createWebAcl(
  stack: Stack,
  limits: Record<keyof typeof PER_ADDRESS_LIMITS, number>,
): CfnWebACL {
  const metrics = (name: string) => ({
    cloudWatchMetricsEnabled: true,
    metricName: `${stack.stackName}-${name}`.replace(/[^A-Za-z0-9_-]/g, '-'),
    sampledRequestsEnabled: true,
  });
  const rules = (Object.keys(SCOPES) as Array<keyof typeof SCOPES>).map((kind, priority) => {
    const name = kind === 'all' ? 'rate-per-address' : `${kind}-per-address`;
    const scope = SCOPES[kind];
    return {
      name,
      priority,
      action: { block: {} },
      statement: {
        rateBasedStatement: {
          aggregateKeyType: 'IP',
          limit: limits[kind],
          evaluationWindowSec: WAF_WINDOW_SECONDS,
          ...(scope ? { scopeDownStatement: scope } : {}),
        },
      },
      visibilityConfig: metrics(name),
    };
  });
  return new CfnWebACL(stack, 'WebAcl', {
    scope: 'CLOUDFRONT',
    defaultAction: { allow: {} },
    description: `Per-address request limits in front of the ${stack.stackName} CDN`,
    visibilityConfig: metrics('web-acl'),
    rules,
  });
}
