// `npm start`: the whole API on http://localhost:PORT (loopback only unless HOST says otherwise), on
// DynamoDB Local, s3rver and the SES stand-in that it starts (and restarts) itself.
import { join, resolve } from 'node:path';
import { freePort, JavaMissingError, startDynamoLocal } from '#infra/local/dynamodb-local.ts';
import { startStandInProcess, supervise } from '#infra/local/stand-ins.ts';
import { ConfigError, loadConfig } from '#lib/platform/config/load.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { ensureWebBuild } from './build-web.ts';
import { recordRunningStack } from './running-stack.ts';

async function main(): Promise<void> {
  // The SDK's notice that its 2027 releases need Node 22: the lock file pins today's, which run on 20.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Validate first, so a bad config stops us with its message before anything starts.
  const settings = loadConfig();
  const dataDir = resolve(settings.data_dir);

  // Ports first: the function processes are told the stand-ins' addresses when they start, so all of
  // them start side by side (a function opens no connection before its first request).
  const [dynamoPort, s3Port, sesPort] = await Promise.all([freePort(), freePort(), freePort()]);
  // The stand-ins' addresses reach every module the normal way: as configuration overrides.
  process.env.AWS__DYNAMODB_ENDPOINT = `http://127.0.0.1:${dynamoPort}`;
  process.env.AWS__S3_ENDPOINT = `http://127.0.0.1:${s3Port}`;
  process.env.AWS__SES_ENDPOINT = `http://127.0.0.1:${sesPort}`;
  process.env.DATA_DIR = dataDir;
  // A localhost base_url names this server: it follows PORT unless BASE_URL says otherwise, so upload
  // and cashier links work on any port.
  const base = new URL(settings.base_url);
  if (!process.env.BASE_URL && base.hostname === 'localhost' && settings.port !== 0) {
    base.port = String(settings.port);
    process.env.BASE_URL = base.origin;
  }
  const local = await import('#infra/local/app.ts');
  const { config } = await import('#lib/platform/config/index.ts');

  // The web console (web/dist), rebuilt when missing or older than web/src; the API runs without it.
  const consoleBuilt = ensureWebBuild().catch((error: unknown) => {
    console.error(`The web console could not be built: ${error instanceof Error ? error.message : error}`);
  });
  // Each stand-in in a process of its own, started again (same port, same data) should it die.
  const [dynamo, s3, ses, functions] = await Promise.allSettled([
    supervise('DynamoDB Local', () =>
      startDynamoLocal({ dbPath: join(dataDir, 'dynamodb'), port: dynamoPort }),
    ),
    supervise('s3rver', () => startStandInProcess('s3', dataDir, s3Port)),
    supervise('SES stand-in', () => startStandInProcess('ses', dataDir, sesPort)),
    local.startLocalFunctions(config),
  ]);
  const stopAll = () =>
    Promise.allSettled([
      ...[dynamo, s3, ses].map((outcome) =>
        outcome.status === 'fulfilled' ? outcome.value.stop() : undefined,
      ),
      ...(functions.status === 'fulfilled' ? [...functions.value.values()].map((fn) => fn.stop()) : []),
    ]);
  if (
    dynamo.status === 'rejected' ||
    s3.status === 'rejected' ||
    ses.status === 'rejected' ||
    functions.status === 'rejected'
  ) {
    await stopAll();
    throw [dynamo, s3, ses, functions].find((outcome) => outcome.status === 'rejected')?.reason;
  }

  let app: Awaited<ReturnType<typeof import('#infra/local/app.ts').startLocalApp>> | undefined;
  let forgetRunningStack = () => {};
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    forgetRunningStack();
    await app?.close();
    await stopAll();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  try {
    await consoleBuilt;
    app = await local.startLocalApp({ functions: functions.value });
  } catch (error) {
    await stopAll();
    throw error;
  }
  // For the one-off scripts (usage:recount, admin:create, migrate:shards, tour): where this stack answers.
  forgetRunningStack = recordRunningStack(dataDir, {
    pid: process.pid,
    api_url: app.url,
    dynamodb_endpoint: dynamo.value.endpoint,
    s3_endpoint: s3.value.endpoint,
    inbox_url: ses.value.endpoint,
    table_name: config.table_name,
    bucket_name: config.bucket_name,
  });
  console.log(
    firstHour(
      app.url,
      config,
      { dataDir, dynamo: dynamo.value.endpoint, s3: s3.value.endpoint, inbox: ses.value.endpoint },
      local.localListenHost(),
    ),
  );
}

/** What a newcomer needs to try the API: where it is, how to log in, where codes and mails appear. */
function firstHour(
  url: string,
  settings: Readonly<AppConfig>,
  where: { dataDir: string; dynamo: string; s3: string; inbox: string },
  listenHost: string,
): string {
  const admin = settings.admin.bootstrap;
  const source = process.env.APP_CONFIG ?? 'infra/config/local.json';
  return [
    `API listening on ${url}  (try: curl ${url}/healthz)`,
    /^(127\.|::1$|localhost$)/.test(listenHost)
      ? `  on ${listenHost}: this machine only (HOST=0.0.0.0 npm start opens it to the network)`
      : `  on ${listenHost}: other machines can reach it, and the administrator and token below`,
    `  web console: ${url}/`,
    `  API document: ${url}/docs  (OpenAPI 3.1: ${url}/api/v1/openapi.json)`,
    ...(admin.username && admin.password
      ? [
          `  administrator: ${admin.username} / ${admin.password}  (admin.bootstrap in ${source}; log in at /admin/auth/login)`,
        ]
      : ['  no administrator is configured: set admin.bootstrap, or npm run admin:create']),
    ...(settings.upload.api_token
      ? [
          `  static upload token: ${settings.upload.api_token}  (Authorization: Bearer <token> on /api/v1/upload)`,
        ]
      : []),
    settings.mail.from
      ? `  mail: sent through SES as ${settings.mail.from}, to the SES stand-in: every mail, codes and links, in the inbox at ${where.inbox}/`
      : '  mail: no mail.from is set, so codes and mails appear in this log as JSON lines with "message":"mail"',
    ...(settings.payment.mock.enabled
      ? ['  payments: the mock cashier is on (orders can be paid at their pay_url)']
      : []),
    '  each function group runs in its own process with the environment the stack gives it',
    `  data: ${where.dataDir}  DynamoDB Local: ${where.dynamo}  S3 (s3rver): ${where.s3}  SES: ${where.inbox}`,
    '  Ctrl+C stops it; data stays for the next start.',
  ].join('\n');
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof JavaMissingError) {
    console.error(error.message);
  } else {
    console.error('Failed to start:', error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
