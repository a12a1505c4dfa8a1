// The prod stage is the capacity model's derivation (infra/capacity.ts): its file, its template and
// docs/CAPACITY.md say the same numbers, and its reservations fit the account quota the doc asks for.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import {
  API_GATEWAY_ACCOUNT_RPS,
  apiPerSecond,
  concurrencyOf,
  dynamoUnitsPerSecond,
  FIRST_RENDERS_PER_UPLOAD,
  groupCapacity,
  LAMBDA_UNRESERVED_MINIMUM,
  lambdaQuotaToRequest,
  PATHS,
  PROD_MEMORY_MB,
  prodCapacitySettings,
  prodThrottle,
  RENDER_MEASURED,
  TARGET,
  vcpuOf,
} from '#infra/capacity.ts';
import { MEMORY_MB } from '#infra/service-function.ts';
import { StageConfigError, stageConfigFrom } from '#infra/stage-config.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import {
  CALLS,
  costAlarmThresholds,
  costPerMillion,
  monthlyAtTarget,
  WORST_HOUR_GOAL_USD,
  worstHour,
} from '#test/perf/capacity-cost.ts';
import { accountQuotas } from '#test/perf/capacity-quotas.ts';
import {
  completedProd,
  DEV_FILE,
  functionOf,
  type Json,
  PROD_FILE,
  resourcesOf,
  type Synth,
  synthDevAndProd,
} from './stack-helpers.ts';

const CAPACITY_DOC = readFileSync(join(PROJECT_ROOT, 'docs/CAPACITY.md'), 'utf8');

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  ({ dev, prod } = synthDevAndProd());
}, 60_000);

const stageThrottleOf = (s: Synth): Json =>
  (resourcesOf(s, 'AWS::ApiGatewayV2::Stage')[0]![1] as Json).Properties.DefaultRouteSettings;

describe('the prod stage file', () => {
  it("carries exactly the model's throttles, reservations, quota and memory", () => {
    const { throttle, render_throttle, reserved_concurrency, lambda_concurrency_quota, memory_mb } =
      PROD_FILE.infra;

    expect({ throttle, render_throttle, reserved_concurrency, lambda_concurrency_quota, memory_mb }).toEqual(
      prodCapacitySettings(),
    );
  });

  it('carries the cost alarms the model derives from its budget', () => {
    expect(PROD_FILE.infra.cost_alarms).toEqual(costAlarmThresholds(PROD_FILE.infra.budget.monthly_usd));
  });

  it('reserves less than the quota the doc asks for, minus what Lambda keeps unreserved', () => {
    const reserved = Object.values(PROD_FILE.infra.reserved_concurrency as Record<string, number>).reduce(
      (sum, value) => sum + value,
      0,
    );

    expect(reserved).toBeLessThanOrEqual(lambdaQuotaToRequest() - LAMBDA_UNRESERVED_MINIMUM);
    expect(CAPACITY_DOC).toContain(
      `Concurrent executions | 1,000 | ${lambdaQuotaToRequest().toLocaleString('en-US')}`,
    );
  });

  it('refuses to synthesize its reservations under the default account quota', () => {
    const completed = completedProd();
    const { lambda_concurrency_quota: _quota, ...withoutQuota } = completed.infra;
    const attempt = () => stageConfigFrom('prod', { ...completed, infra: withoutQuota });

    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/cannot deploy under a quota of 1000 \(infra\.lambda_concurrency_quota/);
  });
});

describe('the synthesized prod template', () => {
  it("throttles the API stage at the model's rate and burst", () => {
    const { rateLimit, burstLimit } = prodThrottle();

    expect(stageThrottleOf(prod)).toEqual({
      ThrottlingRateLimit: rateLimit,
      ThrottlingBurstLimit: burstLimit,
    });
    // Within API Gateway's default account throttle: the target needs no request there.
    expect(rateLimit).toBeLessThanOrEqual(API_GATEWAY_ACCOUNT_RPS);
  });

  it("gives every function the model's memory and reservation; dev keeps its small values", () => {
    for (const row of groupCapacity()) {
      expect(functionOf(prod, row.group).MemorySize, row.group).toBe(PROD_MEMORY_MB[row.group]);
      expect(functionOf(prod, row.group).ReservedConcurrentExecutions, row.group).toBe(row.reserved);
      expect(functionOf(dev, row.group).ReservedConcurrentExecutions, row.group).toBeUndefined();
    }
    expect(functionOf(prod, 'accounts').MemorySize).toBe(1769);
    expect(functionOf(dev, 'accounts').MemorySize).toBe(MEMORY_MB['password-hashing']);
    expect(stageThrottleOf(dev)).toEqual({
      ThrottlingRateLimit: DEV_FILE.infra.throttle.rate_limit,
      ThrottlingBurstLimit: DEV_FILE.infra.throttle.burst_limit,
    });
  });
});

describe('the model', () => {
  it('sizes render from its measured renders: one full vCPU on every stage, the worst peak a quarter of it', () => {
    expect(vcpuOf(PROD_MEMORY_MB.render)).toBe(1);
    // Its class, not a prod override: dev renders the same sources within the same memory.
    expect(MEMORY_MB['image-rendering']).toBe(PROD_MEMORY_MB.render);
    expect(PROD_FILE.infra.memory_mb.render).toBeUndefined();
    expect(RENDER_MEASURED.worstPeakRssMiB * 3).toBeLessThanOrEqual(PROD_MEMORY_MB.render);
    expect(CAPACITY_DOC).toContain(
      `| w=480 WebP | 280-335 ms | ${RENDER_MEASURED.thumbnailPeakRssMiB} MiB |`,
    );
    expect(CAPACITY_DOC).toContain(`(${RENDER_MEASURED.worstPeakRssMiB} through the renderer) |`);
    // First renders only (the CDN serves repeats): each direct upload's two thumbnails.
    const first = PATHS.find((path) => path.name === 'GET /i/{key}?w= (first render)')!;
    expect(first.perSecond).toBe(TARGET.uploadsPerSecond * FIRST_RENDERS_PER_UPLOAD);
  });

  it('reserves every function at least its Little-law concurrency with headroom', () => {
    expect(new Set(groupCapacity().map((row) => row.group))).toEqual(new Set(FUNCTION_GROUPS));
    for (const row of groupCapacity()) {
      expect(row.reserved, row.group).toBeGreaterThanOrEqual(Math.ceil(row.concurrency * 1.5));
    }
    expect(prodThrottle().rateLimit).toBeGreaterThanOrEqual(apiPerSecond() * 1.5);
  });
});

const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 1 });
const dollars = (value: number) => `$${value.toFixed(2)}`;

describe('docs/CAPACITY.md', () => {
  it("shows each path's rate, duration and concurrency as the model has them", () => {
    for (const path of PATHS) {
      const row = `| ${path.name} | \`${path.group}\` | ${number(path.perSecond)} (${path.rate}) | ${number(path.p50Ms)} | ${number(path.p99Ms)} | ${number(concurrencyOf(path))} |`;
      expect(CAPACITY_DOC, path.name).toContain(row);
    }
  });

  it("shows each function's rate, concurrency, memory and reservation as the model derives them", () => {
    for (const row of groupCapacity()) {
      const line = `| \`${row.group}\` | ${number(row.perSecond)} | ${number(row.concurrency)} | ${number(row.memoryMb)} | ${number(row.reserved)} |`;
      expect(CAPACITY_DOC, row.group).toContain(line);
    }
  });

  it('asks for every account quota the model needs, beside its default', () => {
    for (const row of accountQuotas()) {
      expect(CAPACITY_DOC, row.quota).toContain(`| ${row.quota} | ${row.defaultValue} | ${row.askFor} |`);
    }
  });

  it("states the table's request units at the target as the model sums them", () => {
    const { rru, wru } = dynamoUnitsPerSecond();
    expect(CAPACITY_DOC).toContain(`| **total** | | | | **${number(rru)}** | **${number(wru)}** |`);
    for (const path of PATHS) {
      const row = `| ${path.name} | ${number(path.perSecond)} | ${path.rru} | ${path.wru} | ${number(path.perSecond * path.rru)} | ${number(path.perSecond * path.wru)} |`;
      expect(CAPACITY_DOC, path.name).toContain(row);
    }
  });

  it('prices every main path as the cost model does, its log line, trace, WAF and CDN log included', () => {
    for (const call of CALLS) {
      const cost = costPerMillion(call);
      const parts = [cost.lambda, cost.api, cost.cdn, cost.waf, cost.dynamodb, cost.s3, cost.events];
      const line = `| ${cost.name} | ${[...parts, cost.logs, cost.xray, cost.cdnLogs].map(dollars).join(' | ')} | **${dollars(cost.total)}** |`;
      expect(CAPACITY_DOC, call.name).toContain(line);
    }
  });

  it('states what logs, traces, CDN logs and the WAF cost in a month at the target', () => {
    for (const item of monthlyAtTarget()) {
      const line = `| ${item.name} | ${item.basis} | $${Math.round(item.dollars).toLocaleString('en-US')} |`;
      expect(CAPACITY_DOC, item.name).toContain(line);
    }
  });

  it('states the worst hour one anonymous address can cost on each anonymous route, within the goal where a count bounds it', () => {
    for (const row of worstHour()) {
      const line = `| ${row.name} | ${number(row.limit)} | ${number(row.perHour)} | $${row.perRequest.toPrecision(3)} | **$${row.dollars.toFixed(3)}** |`;
      expect(CAPACITY_DOC, row.name).toContain(line);
      if (!row.unbounded) expect(row.dollars, row.name).toBeLessThanOrEqual(WORST_HOUR_GOAL_USD);
    }
    expect(worstHour().filter((row) => row.unbounded)).toHaveLength(1);
  });

  it("states prod's cost alarms as the model derives them from its budget", () => {
    const budget = PROD_FILE.infra.budget.monthly_usd as number;
    const alarms = costAlarmThresholds(budget);
    expect(CAPACITY_DOC).toContain(`a budget of $${number(budget)} a month`);
    for (const [name, value] of Object.entries(alarms))
      expect(CAPACITY_DOC, name).toContain(`| \`${name}\` | ${number(value)} |`);
  });
});
