// Builds the CDK app for one stage: the ServiceStack, tags, and the cdk-nag AwsSolutions checks.
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PROJECT_ROOT } from './bundling.ts';
import { ServiceStack } from './stack.ts';
import { loadStageConfig, type StageConfig } from './stage-config.ts';

export const DEFAULT_STAGE = 'dev';
export const SERVICE_NAME = 'AccountUploadPayment';

export interface BuildServiceAppOptions {
  /** Default: context `stage` (`-c stage=prod`), else dev. */
  stage?: string;
  /** A ready config instead of infra/config/<stage>.json (tests vary settings this way). */
  config?: StageConfig;
  /** Extra app context, e.g. the feature flags of cdk.json when not run by the CLI. */
  context?: Record<string, unknown>;
  /** false skips esbuild (context `aws:cdk:bundling-stacks: []`): template checks need no bundles. */
  bundling?: boolean;
  outdir?: string;
  /** The web console build to deploy (default web/dist; a folder without index.html deploys none). */
  consoleDir?: string;
}

export interface ServiceApp {
  app: App;
  stack: ServiceStack;
  nag: AwsSolutionsChecks;
}

export function buildServiceApp(options: BuildServiceAppOptions = {}): ServiceApp {
  const app = new App({
    context: {
      ...options.context,
      // Only the App constructor honours this key; the CLI's --no-staging does not skip bundling.
      ...(options.bundling === false ? { 'aws:cdk:bundling-stacks': [] } : {}),
    },
    ...(options.outdir ? { outdir: options.outdir } : {}),
  });
  const stage = options.stage ?? options.config?.stage ?? app.node.tryGetContext('stage') ?? DEFAULT_STAGE;
  const config = options.config ?? loadStageConfig(String(stage), PROJECT_ROOT);

  // A stage that pins infra.account/region deploys only there (the CLI refuses other credentials); without
  // them account and region come from the deploying credentials, and synth needs none (dev, tests).
  const { account, region } = config.infra;
  const stack = new ServiceStack(app, `${SERVICE_NAME}-${config.stage}`, {
    config,
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
    ...(account || region ? { env: { ...(account ? { account } : {}), ...(region ? { region } : {}) } } : {}),
    description: `Account, upload and payment service (${config.stage})`,
  });
  Tags.of(app).add('service', SERVICE_NAME);
  Tags.of(app).add('stage', config.stage);

  // Any unacknowledged finding makes app.synth() throw (cdk-nag 3 runs as a policy validation plugin).
  const nag = new AwsSolutionsChecks(app);
  Validations.of(app).addPlugins(nag);
  return { app, stack, nag };
}
