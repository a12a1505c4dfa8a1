// Template checks of the bans' WAF mirror (docs/DEPLOYMENT.md "WAF", docs/ABUSE.md "Bans"): where the stack
// makes its web ACL, two CLOUDFRONT IP sets (IPv4, IPv6) behind a block rule first of all, and the
// ban-mirror worker every minute with GetIPSet and UpdateIPSet on those two sets alone; where it makes none
// (dev, an attached ACL), no sets, no schedule, no grant.
import { beforeAll, describe, expect, it } from 'vitest';
import { stageConfigFrom } from '#infra/stage-config.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import {
  actionsOf,
  completedProd,
  functionIdOf,
  functionOf,
  type Json,
  PROD_ACCOUNT,
  resourcesOf,
  roleStatements,
  type Synth,
  synth,
} from './stack-helpers.ts';

let dev: Synth;
let prod: Synth;
let attached: Synth;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synth({ config: stageConfigFrom('prod', completedProd()) });
  const arn = `arn:aws:wafv2:us-east-1:${PROD_ACCOUNT}:global/webacl/edge/0f8fad5b-d9cb-469f-a165-70867728950e`;
  attached = synth({ config: stageConfigFrom('prod', completedProd({ infra: { web_acl_arn: arn } })) });
}, 120_000);

const setsOf = (s: Synth) =>
  Object.fromEntries(
    resourcesOf(s, 'AWS::WAFv2::IPSet').map(([id, set]) => [set.Properties.IPAddressVersion as string, id]),
  );
const mirror = (s: Synth) => s.stack.workers.functions['ban-mirror'];
const scheduleOf = (s: Synth) =>
  resourcesOf(s, 'AWS::Events::Rule').filter(([, rule]) =>
    (rule.Properties.Targets ?? []).some(
      (target: Json) => target.Arn?.['Fn::GetAtt']?.[0] === functionIdOf(s, mirror(s)),
    ),
  );

describe('the WAF mirror of the bans', () => {
  it('makes two CLOUDFRONT IP sets and blocks them first, before every rate rule', () => {
    const sets = setsOf(prod);
    expect(Object.keys(sets).sort()).toEqual(['IPV4', 'IPV6']);
    for (const [, set] of resourcesOf(prod, 'AWS::WAFv2::IPSet'))
      expect(set.Properties).toMatchObject({ Scope: 'CLOUDFRONT', Addresses: [] });
    const [[, acl]] = resourcesOf(prod, 'AWS::WAFv2::WebACL') as [[string, Json]];
    const rules = acl.Properties.Rules as Json[];
    const banned = rules.find((rule) => rule.Name === 'banned-addresses')!;
    expect(banned.Action).toEqual({ Block: {} });
    expect(banned.Priority).toBe(0);
    expect(rules.filter((rule) => rule !== banned).every((rule) => rule.Priority > 0)).toBe(true);
    expect(new Set(rules.map((rule) => rule.Priority)).size).toBe(rules.length);
    expect(banned.Statement.OrStatement.Statements).toEqual([
      { IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': [sets.IPV4, 'Arn'] } } },
      { IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': [sets.IPV6, 'Arn'] } } },
    ]);
  });

  it('runs the ban-mirror worker every minute, with GetIPSet and UpdateIPSet on those two sets only', () => {
    const rules = scheduleOf(prod);
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties.ScheduleExpression).toBe('rate(1 minute)');
    expect(functionOf(prod, mirror(prod)).Timeout).toBeLessThan(60);
    const sets = setsOf(prod);
    const waf = roleStatements(prod, mirror(prod)).filter((statement) =>
      actionsOf([statement]).some((action) => action.startsWith('wafv2:')),
    );
    expect(waf).toEqual([
      expect.objectContaining({
        Action: ['wafv2:GetIPSet', 'wafv2:UpdateIPSet'],
        Resource: [{ 'Fn::GetAtt': [sets.IPV4, 'Arn'] }, { 'Fn::GetAtt': [sets.IPV6, 'Arn'] }],
      }),
    ]);
    // In the table, the bans' partition only.
    const table = roleStatements(prod, mirror(prod)).filter((statement) =>
      actionsOf([statement]).some((action) => action.startsWith('dynamodb:')),
    );
    expect(table).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:Query',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['BANS'] } },
      }),
    ]);
    const env = functionOf(prod, mirror(prod)).Environment.Variables;
    expect(env.ABUSE__BANS__WAF_IPV4_SET_ARN).toEqual({ 'Fn::GetAtt': [sets.IPV4, 'Arn'] });
    expect(env.ABUSE__BANS__WAF_IPV6_SET_ARN).toEqual({ 'Fn::GetAtt': [sets.IPV6, 'Arn'] });
    // No API function may write the sets.
    for (const group of FUNCTION_GROUPS)
      expect(
        actionsOf(roleStatements(prod, group)).filter((a) => a.startsWith('wafv2:')),
        group,
      ).toEqual([]);
  });

  it('has no sets, schedule nor grant where the stack makes no web ACL (dev, an attached ACL)', () => {
    for (const s of [dev, attached]) {
      expect(resourcesOf(s, 'AWS::WAFv2::IPSet')).toEqual([]);
      expect(scheduleOf(s)).toEqual([]);
      expect(actionsOf(roleStatements(s, mirror(s))).filter((a) => a.startsWith('wafv2:'))).toEqual([]);
    }
  });
});
