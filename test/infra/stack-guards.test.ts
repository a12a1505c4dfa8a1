// Template checks of what the ServiceStack refuses or reports: stage config, prod guards, cdk-nag.
import { Token } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { GROUP_NEEDS } from '#functions/needs.ts';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { loadStageConfig, StageConfigError, stageConfigFrom } from '#infra/stage-config.ts';
import {
  buildForChecks,
  completedProd,
  DEV_FILE,
  type Json,
  PROD_ACCOUNT,
  PROD_FILE,
  PROD_REGION,
  type Synth,
  synth,
  synthDevAndProd,
} from './stack-helpers.ts';

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  ({ dev, prod } = synthDevAndProd());
}, 60_000);

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the AwsSolutions pack', () => {
    const report = dev.nag.validateScope(dev.app);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(prod.nag.validateScope(prod.app).violations.map((violation) => violation.ruleName)).toEqual([]);
  });

  it('still reports a finding nobody acknowledged', () => {
    const { app, stack, nag } = buildForChecks({ stage: 'dev' });
    new Bucket(stack, 'Unchecked');

    const rules = nag.validateScope(app).violations.map((violation) => violation.ruleName);

    expect(rules).toEqual(expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']));
  });
});

describe('stage config', () => {
  it('loads the local and dev stage files', () => {
    for (const stage of ['local', 'dev']) {
      expect(loadStageConfig(stage, PROJECT_ROOT).stage).toBe(stage);
    }
  });

  it('refuses the committed prod file until its account and sender are filled in (it pins us-east-1)', () => {
    const attempt = () => loadStageConfig('prod', PROJECT_ROOT);

    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/mail\.from[\s\S]*infra\.account/);
    expect(attempt).not.toThrow(/infra\.region/);
    expect(PROD_FILE.infra.region).toBe('us-east-1');
  });

  it('refuses settings the deployment owns and unknown infra keys, naming each', () => {
    const attempt = () =>
      stageConfigFrom('dev', {
        table_name: 'mine',
        master_key: { provider: 'local' },
        infra: { colour: 'red' },
      });

    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/table_name[\s\S]*master_key[\s\S]*infra/);
  });

  it('keeps the embedded base_url and the infra section away from the functions', () => {
    const config = loadStageConfig('local', PROJECT_ROOT);

    expect(config.appConfig).not.toHaveProperty('base_url');
    expect(config.appConfig).not.toHaveProperty('infra');
    expect(config.secretKeys).toEqual(
      expect.arrayContaining(['admin.bootstrap.password', 'upload.api_token']),
    );
  });
});

describe('production guards', () => {
  const prodSynth = (raw: Json) => () => synth({ config: stageConfigFrom('prod', raw) });

  it('pins the prod stack to its account and region; dev stays environment-agnostic', () => {
    expect(prod.stack.account).toBe(PROD_ACCOUNT);
    expect(prod.stack.region).toBe(PROD_REGION);
    expect(Token.isUnresolved(dev.stack.account)).toBe(true);
    expect(Token.isUnresolved(dev.stack.region)).toBe(true);
  });

  it('refuses a prod stage without mail.from, since codes would go to the logs', () => {
    const { mail: _mail, ...withoutMail } = completedProd();

    expect(prodSynth(withoutMail)).toThrow(StageConfigError);
    expect(prodSynth(withoutMail)).toThrow(/mail\.from: a production stage must send mail through SES/);
  });

  it('refuses a prod stage with the mock cashier on', () => {
    const withMock = { ...completedProd(), payment: { ...PROD_FILE.payment, mock: { enabled: true } } };

    expect(prodSynth(withMock)).toThrow(/payment\.mock\.enabled: must be false in a production stage/);
  });

  it('refuses a prod stage without a pinned 12-digit account', () => {
    const withoutAccount = completedProd({ infra: { account: undefined } });
    const shortAccount = completedProd({ infra: { account: '12345' } });

    expect(prodSynth(withoutAccount)).toThrow(
      /infra\.account: a production stage must pin the 12-digit AWS account/,
    );
    expect(prodSynth(shortAccount)).toThrow(/infra\.account: must be a 12-digit AWS account id/);
  });

  it('refuses a prod stage without a pinned region', () => {
    const withoutRegion = completedProd({ infra: { region: undefined } });

    expect(prodSynth(withoutRegion)).toThrow(/infra\.region: a production stage must pin the AWS region/);
  });

  it('refuses a prod stage with a CORS origin that is not https, naming it', () => {
    const plainHttp = completedProd({
      infra: { cors_origins: ['https://app.example.com', 'http://app.example.com'] },
    });

    expect(prodSynth(plainHttp)).toThrow(
      /infra\.cors_origins: a production stage allows https origins only, not http:\/\/app\.example\.com$/m,
    );
  });

  it('refuses a prod stage whose sign-in provider carries its client secret inline or trusts an http issuer', () => {
    const provider = { id: 'sso', kind: 'oidc', label: 'SSO', client_id: 'c', client_secret: 'inline' };
    const inline = {
      ...completedProd(),
      auth: { providers: [{ ...provider, issuer: 'http://sso.example.com' }] },
    };
    expect(prodSynth(inline)).toThrow(
      /auth\.providers\.0\.client_secret: a production stage keeps client secrets in Secrets Manager/,
    );
    expect(prodSynth(inline)).toThrow(
      /auth\.providers\.0\.issuer: a production stage trusts https issuers only/,
    );
    const { client_secret: _secret, ...kept } = provider;
    const both = { ...kept, issuer: 'https://sso.example.com', secret_id: 's', client_secret: 'x' };
    expect(() => stageConfigFrom('dev', { auth: { providers: [both] } })).toThrow(
      /name exactly one of secret_id and client_secret/,
    );
  });

  it('names every prod problem at once', () => {
    const { region: _region, budget: _budget, cost_alarms: _alarms, ...infra } = PROD_FILE.infra;
    const everythingWrong = {
      ...PROD_FILE,
      payment: { ...PROD_FILE.payment, mock: { enabled: true } },
      infra: { ...infra, cors_origins: ['http://localhost:5173'] },
    };

    let message = '';
    try {
      prodSynth(everythingWrong)();
    } catch (error) {
      message = (error as Error).message;
    }

    for (const setting of [
      'mail.from',
      'payment.mock.enabled',
      'infra.account',
      'infra.region',
      'infra.cors_origins',
      // Its web ACL can be created in us-east-1 only; the cost guardrails are stated or refused.
      'infra.waf',
      'infra.budget',
      'infra.cost_alarms',
    ]) {
      expect(message, setting).toContain(`  - ${setting}: `);
    }
  });

  it('applies none of the prod guards to other stages', () => {
    expect(stageConfigFrom('dev', DEV_FILE).stage).toBe('dev');
  });

  it('applies them to any stage that says deployment.production, whatever its name', () => {
    // Prepare: the dev file (mock cashier on, an http origin, no sender) marked production, under another name.
    const marked = { ...DEV_FILE, stage: 'live', deployment: { production: true } };

    // Act
    const attempt = () => stageConfigFrom('live', marked);

    // Assess
    expect(attempt).toThrow(StageConfigError);
    expect(attempt).toThrow(/payment\.mock\.enabled: must be false in a production stage/);
    expect(attempt).toThrow(/mail\.from: a production stage[\s\S]*infra\.cors_origins: a production stage/);
    expect(stageConfigFrom('live', { ...DEV_FILE, stage: 'live' }).settings.payment.mock.enabled).toBe(true);
  });

  it('gives tracing, backups and reserved concurrency by the setting (a prod file without it: by its name)', () => {
    // Prepare: the completed prod file without the settings those defaults fill in.
    const file = completedProd({ infra: { tracing: undefined, reserved_concurrency: undefined } });
    const as = (stage: string, production: boolean | undefined) =>
      stageConfigFrom(stage, { ...file, stage, deployment: { production } }).infra;

    // Act
    const marked = [as('live', true), as('prod', undefined)];
    const unmarked = [as('live', undefined), as('prod', false)];

    // Assess
    for (const infra of marked) {
      expect(infra).toMatchObject({ tracing: true, backup: { retentionDays: 90 } });
      expect(infra.reservedConcurrency).toMatchObject({ render: expect.any(Number) });
    }
    for (const infra of unmarked) {
      expect(infra).toMatchObject({ tracing: false, reservedConcurrency: {} });
      expect(infra.backup).toBeUndefined();
    }
  });
});

describe('edge guards', () => {
  it('refuses to synthesize an API function that does not keep the front door', () => {
    const files = GROUP_NEEDS.meta as { frontDoor?: boolean };
    delete files.frontDoor;
    try {
      expect(() => synth({ stage: 'dev' })).toThrow(
        /The meta function is reached through API Gateway but functions\/meta\/needs\.ts does not declare frontDoor/,
      );
    } finally {
      files.frontDoor = true;
    }
  }, 30_000);

  it('refuses more reserved concurrency than an account can give, and non-positive reservations', () => {
    const greedy = { accounts: 500, files: 500 };
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, reserved_concurrency: greedy } }),
    ).toThrow(
      /infra\.reserved_concurrency: 1000 reserved in all; Lambda keeps 100 of an account's concurrency unreserved/,
    );
    expect(() =>
      stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: { ...DEV_FILE.infra, reserved_concurrency: { accounts: 0 } },
      }),
    ).toThrow(/infra\.reserved_concurrency\.accounts/);
    expect(() =>
      stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: { ...DEV_FILE.infra, reserved_concurrency: { mailer: 5 } },
      }),
    ).toThrow(StageConfigError);
  });

  it('refuses an origin secret version that is not a Secrets Manager version id, and front_door in a stage file', () => {
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, origin_secret_version: 'latest' } }),
    ).toThrow(/infra\.origin_secret_version: must be a Secrets Manager version id/);
    expect(() => stageConfigFrom('dev', { ...DEV_FILE, front_door: { provider: 'none' } })).toThrow(
      /front_door\.provider: is set by the deployment/,
    );
  });
});
