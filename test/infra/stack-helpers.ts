// What the template checks of the ServiceStack share (every test/infra test that synthesizes): one synth with
// bundling skipped and cdk-nag on, and readers of the synthesized template.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { AwsSolutionsChecks } from 'cdk-nag';
import { PROJECT_ROOT } from '#infra/bundling.ts';
import { type BuildServiceAppOptions, buildServiceApp, type ServiceApp } from '#infra/service-app.ts';
import type { ServiceFunction } from '#infra/service-function.ts';
import type { ServiceStack } from '#infra/stack.ts';
import { stageConfigFrom } from '#infra/stage-config.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import { loadConfig } from '#lib/platform/config/load.ts';
import { CDK_CONTEXT } from '#test/support/cdk-context.ts';

// biome-ignore lint/suspicious/noExplicitAny: synthesized CloudFormation JSON, read by shape in each test
export type Json = Record<string, any>;

/** A console folder with no build in it: template checks do not depend on whether web/dist was built. */
export const NO_CONSOLE_BUILD = join(tmpdir(), 'no-console-build-here');

/** A small stand-in for web/dist: the page and one hashed asset, as vite (base /console/) writes them. */
export function consoleBuildFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'console-build-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><title>Console</title><script type="module" src="/console/assets/index-abc123.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("console");\n');
  return dir;
}

export interface Synth {
  app: App;
  stack: ServiceStack;
  nag: AwsSolutionsChecks;
  template: Template;
  resources: Record<string, Json>;
}

/** The app as every template check builds it, not yet synthesized: cdk.json's context, no bundles. */
export function buildForChecks(options: BuildServiceAppOptions): ServiceApp {
  const built = buildServiceApp({
    consoleDir: NO_CONSOLE_BUILD,
    ...options,
    context: CDK_CONTEXT,
    bundling: false,
  });
  // Without a console build on purpose: the warning would only repeat itself on every synth here.
  if (!options.consoleDir)
    Validations.of(built.stack).acknowledge({
      id: 'Annotation::service:console-not-built',
      reason: 'Template checks synthesize without a console build unless they pass one',
    });
  return built;
}

export function synth(options: BuildServiceAppOptions): Synth {
  const built = buildForChecks(options);
  // Template.fromStack synthesizes, which runs the cdk-nag plugin: an unacknowledged finding throws here.
  const template = Template.fromStack(built.stack);
  return { ...built, template, resources: template.toJSON().Resources as Record<string, Json> };
}

export function resourcesOf(s: Synth, type: string): Array<[string, Json]> {
  return Object.entries(s.resources).filter(([, resource]) => resource.Type === type);
}

/** The logical id of a construct's CloudFormation resource (its default child). */
export function logicalIdOf(s: Synth, construct: { node: { defaultChild?: unknown } }): string {
  return s.stack.getLogicalId(construct.node.defaultChild as never);
}

/** An API group's function, or a function given as is (a worker's). */
const serviceFunctionOf = (s: Synth, fn: FunctionGroup | ServiceFunction): ServiceFunction =>
  typeof fn === 'string' ? s.stack.functions[fn] : fn;

export function functionIdOf(s: Synth, fn: FunctionGroup | ServiceFunction): string {
  return logicalIdOf(s, serviceFunctionOf(s, fn).fn);
}

export function functionOf(s: Synth, fn: FunctionGroup | ServiceFunction): Json {
  return s.resources[functionIdOf(s, fn)]!.Properties;
}

/** Every Allow statement of the role's inline and attached policies. */
export function roleStatements(s: Synth, fn: FunctionGroup | ServiceFunction): Json[] {
  const roleId = logicalIdOf(s, serviceFunctionOf(s, fn).role);
  return resourcesOf(s, 'AWS::IAM::Policy')
    .filter(([, policy]) => policy.Properties.Roles.some((role: Json) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Json[]);
}

export function actionsOf(statements: Json[]): string[] {
  return statements.flatMap((statement) => [statement.Action].flat() as string[]);
}

export function appConfigOf(s: Synth, group: FunctionGroup) {
  const env = functionOf(s, group).Environment.Variables as Json;
  return loadConfig({ env: { APP_CONFIG_JSON: env.APP_CONFIG_JSON } });
}

export function distributionConfigOf(s: Synth): Json {
  return (resourcesOf(s, 'AWS::CloudFront::Distribution')[0]![1] as Json).Properties.DistributionConfig;
}

export const readStageFile = (stage: string): Json =>
  JSON.parse(readFileSync(join(PROJECT_ROOT, `infra/config/${stage}.json`), 'utf8'));

export const PROD_FILE = readStageFile('prod');
export const DEV_FILE = readStageFile('dev');
export const PROD_ACCOUNT = '123456789012';
export const PROD_REGION: string = PROD_FILE.infra.region;
export const CERTIFICATE_ARN = `arn:aws:acm:us-east-1:${PROD_ACCOUNT}:certificate/0f8fad5b-d9cb-469f-a165-70867728950e`;

/** prod.json as an operator completes it before the first deploy (docs/DEPLOYMENT.md). */
export function completedProd(overrides: { mail?: Json; infra?: Json } = {}): Json {
  return {
    ...PROD_FILE,
    mail: { from: 'no-reply@mail.example.com', ...overrides.mail },
    infra: { ...PROD_FILE.infra, account: PROD_ACCOUNT, region: PROD_REGION, ...overrides.infra },
  };
}

/** The dev stage and a completed prod stage, each synthesized once: what most template tests read. */
export function synthDevAndProd(): { dev: Synth; prod: Synth } {
  return { dev: synth({ stage: 'dev' }), prod: synth({ config: stageConfigFrom('prod', completedProd()) }) };
}
