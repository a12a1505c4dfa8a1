// The per-address limits in front of the CDN (docs/DESIGN.md 23, docs/DEPLOYMENT.md "WAF"): a CLOUDFRONT-scoped
// web ACL of rate-based rules, one on every request and one per kind of anonymous request that costs the most,
// behind a first rule that blocks the banned networks (docs/ABUSE.md "Bans").
import type { Stack } from 'aws-cdk-lib';
import { CfnIPSet, CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
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

/** The banned networks the ban-mirror worker keeps (docs/DEPLOYMENT.md "WAF"), one set per IP version. */
export interface BannedAddressSets {
  ipv4: CfnIPSet;
  ipv6: CfnIPSet;
}

/** The stack's two IP sets of banned networks, made on first use (empty: the worker fills them). */
export function bannedAddressSets(stack: Stack): BannedAddressSets {
  const setOf = (version: 'IPV4' | 'IPV6') => {
    const id = `Banned${version === 'IPV4' ? 'Ipv4' : 'Ipv6'}`;
    return (
      (stack.node.tryFindChild(id) as CfnIPSet | undefined) ??
      new CfnIPSet(stack, id, {
        scope: 'CLOUDFRONT',
        ipAddressVersion: version,
        addresses: [],
        description: `Banned ${version} networks of ${stack.stackName}, written by its ban-mirror worker`,
      })
    );
  };
  return { ipv4: setOf('IPV4'), ipv6: setOf('IPV6') };
}

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
  const rates = (Object.keys(SCOPES) as Array<keyof typeof SCOPES>).map((kind, index) => {
    const name = kind === 'all' ? 'rate-per-address' : `${kind}-per-address`;
    const scope = SCOPES[kind];
    return {
      name,
      priority: index + 1,
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
  // First, before any count: the banned networks (both sets), kept by the ban-mirror worker.
  const banned = bannedAddressSets(stack);
  const bans = {
    name: 'banned-addresses',
    priority: 0,
    action: { block: {} },
    statement: {
      orStatement: {
        statements: [banned.ipv4, banned.ipv6].map((set) => ({
          ipSetReferenceStatement: { arn: set.attrArn },
        })),
      },
    },
    visibilityConfig: metrics('banned-addresses'),
  };
  const rules = [bans, ...rates];
  return new CfnWebACL(stack, 'WebAcl', {
    scope: 'CLOUDFRONT',
    defaultAction: { allow: {} },
    description: `Per-address request limits in front of the ${stack.stackName} CDN`,
    visibilityConfig: metrics('web-acl'),
    rules,
  });
}
