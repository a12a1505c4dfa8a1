// The small-site stage (infra/config/small.json, docs/DEPLOYMENT.md "A small site"): what a new AWS account
// can deploy with its default quotas, with the protections of a public site on.
import { describe, expect, it } from 'vitest';
import {
  API_GATEWAY_ACCOUNT_BURST,
  concurrencyAtThrottle,
  DEFAULT_ACCOUNT_CONCURRENCY,
  LAMBDA_UNRESERVED_MINIMUM,
  NEW_ACCOUNT_CONCURRENCY,
} from '#infra/capacity.ts';
import { loadStageConfig, stageConfigFrom } from '#infra/stage-config.ts';
import { type Json, PROD_ACCOUNT, readStageFile, resourcesOf, synth } from './stack-helpers.ts';

const config = loadStageConfig('small');
const small = synth({ config });

describe('the small-site stage', () => {
  it('reserves no concurrency for any function, API group or worker', () => {
    const functions = resourcesOf(small, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(10);
    for (const [id, fn] of functions) expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
    // So the default quota is all it states, and Lambda's unreserved share of it is untouched.
    expect(config.infra.reservedConcurrency).toEqual({});
    expect(DEFAULT_ACCOUNT_CONCURRENCY - LAMBDA_UNRESERVED_MINIMUM).toBeGreaterThan(0);
  });

  it("throttles the API so that even a new account's first quota holds the concurrency it can cause", () => {
    const [[, stage]] = resourcesOf(small, 'AWS::ApiGatewayV2::Stage') as [[string, Json]];
    const { ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst } = stage.Properties.DefaultRouteSettings;
    expect(rate).toBe(config.infra.throttle.rateLimit);
    expect(concurrencyAtThrottle(rate)).toBeLessThanOrEqual(NEW_ACCOUNT_CONCURRENCY);
    expect(burst).toBeLessThanOrEqual(API_GATEWAY_ACCOUNT_BURST);
    // Renders have their own, inside the stage's.
    expect(config.infra.renderThrottle!.rateLimit).toBeLessThanOrEqual(rate);
  });

  it("keeps a public site's protections: WAF rate rules, a budget, no mock cashier, administrators' second factor", () => {
    expect(resourcesOf(small, 'AWS::WAFv2::WebACL')).toHaveLength(1);
    expect(resourcesOf(small, 'AWS::Budgets::Budget')).toHaveLength(1);
    expect(config.settings.payment.mock.enabled).toBe(false);
    expect(config.settings.admin.require_second_factor).toBe(true);
    expect(config.settings.auth.challenge.required).toBe(true);
    expect(config.infra.retainData).toBe(true);
    expect(config.infra.backup).toEqual({ retentionDays: 35 });
  });
});

describe("the small-site stage's next step (docs/DEPLOYMENT.md)", () => {
  it('synthesizes under the production guards once the operator adds mail.from and the account', () => {
    const file = readStageFile('small');
    const completed = {
      ...file,
      deployment: { production: true },
      mail: { from: 'no-reply@mail.example.com' },
      infra: { ...file.infra, account: PROD_ACCOUNT },
    };
    const marked = stageConfigFrom('small', completed);
    expect(marked.infra.reservedConcurrency).toEqual({});
    expect(() => synth({ config: marked })).not.toThrow();
    // Marked production without them, the synth names both.
    expect(() => stageConfigFrom('small', { ...file, deployment: { production: true } })).toThrow(
      /mail\.from[\s\S]*infra\.account/,
    );
  });
});
