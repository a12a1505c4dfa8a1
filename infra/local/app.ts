// The whole API on one local HTTP server, on stand-ins already running (endpoints come from config). Two
// shapes: npm start runs each group in its own process with only the environment the stack gives that
// function (startLocalFunctions); tests and benchmarks import the same handlers into this process.
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUP_NEEDS, WORKER_NEEDS, type WorkerName } from '#functions/needs.ts';
import { shardRanges } from '#functions/reconciler/fan-out.ts';
import { directUploadTooLarge } from '#lib/files/errors.ts';
import { FUNCTION_GROUPS, type FunctionGroup } from '#lib/http/routes.ts';
import { serveStoredFileLocally } from '#lib/http/stored-file.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { openMasterKey } from '#lib/platform/crypto/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { AccessLogStore } from '#lib/platform/storage/access-logs.ts';
import { FileStorage } from '#lib/platform/storage/s3.ts';
import { DEPLOYMENT_OWNED_SETTINGS, environmentFor } from '#lib/wiring/needs.ts';
import { localAccessLog } from './access-log.ts';
import { localEdge } from './edge.ts';
import { loopbackOrigin } from './follow-host.ts';
import { localEdgeHeaders } from './front-door.ts';
import { type FunctionProcess, startFunctionProcess } from './function-process.ts';
import { startLocalModeration } from './moderation.ts';
import { startLocalOutboxDrain } from './outbox-drain.ts';
import { ensureBucket, ensureTable } from './provision.ts';
import {
  LOCAL_LIFECYCLE_INTERVAL_MS,
  LOCAL_TAKEDOWN_INTERVAL_MS,
  LOCAL_WEBHOOK_RETRY_INTERVAL_MS,
  startLocalSchedule,
} from './schedule.ts';
import { createLocalServer, type GroupHandler } from './server.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Imported on first use, like a Lambda cold start: a group's code loads only when it is called.
const HANDLERS: Record<FunctionGroup, () => Promise<{ handler: GroupHandler }>> = {
  accounts: () => import('#functions/accounts/handler.ts'),
  shares: () => import('#functions/shares/handler.ts'),
  files: () => import('#functions/files/handler.ts'),
  meta: () => import('#functions/meta/handler.ts'),
  render: () => import('#functions/render/handler.ts'),
  payments: () => import('#functions/payments/handler.ts'),
  'payment-callback': () => import('#functions/payment-callback/handler.ts'),
};

export async function loadGroupHandler(group: FunctionGroup): Promise<GroupHandler> {
  return (await HANDLERS[group]()).handler;
}

/** The settings a function reads from APP_CONFIG_JSON: everything but what its needs set. */
export function functionAppConfig(settings: Readonly<AppConfig>): Record<string, unknown> {
  const copy = structuredClone(settings) as Record<string, unknown>;
  for (const path of DEPLOYMENT_OWNED_SETTINGS) {
    const parts = path.split('.');
    let node = copy;
    for (const part of parts.slice(0, -1)) node = (node[part] ?? {}) as Record<string, unknown>;
    delete node[parts.at(-1)!];
  }
  return copy;
}

/**
 * One group's local environment: what the stack would set from its needs (lib/wiring/needs.ts), with the
 * stand-ins' endpoints in place of AWS's and the local key file in place of KMS; nothing else.
 */
export function localFunctionEnvironment(
  group: FunctionGroup | WorkerName,
  settings: Readonly<AppConfig>,
): Record<string, string> {
  const needs = { ...GROUP_NEEDS, ...WORKER_NEEDS }[group];
  const { aws } = settings;
  return {
    APP_CONFIG_JSON: JSON.stringify(functionAppConfig(settings)),
    ...environmentFor(needs, {
      baseUrl: settings.base_url,
      tableName: settings.table_name,
      bucketName: settings.bucket_name,
      accessLogBucketName: settings.access_log_bucket_name,
      masterKey: { provider: 'local', dataDir: resolve(settings.data_dir) },
      frontDoor: { provider: 'local', dataDir: resolve(settings.data_dir) },
      ...(aws.event_bus_name ? { eventBusName: aws.event_bus_name } : {}),
      ...(settings.payment.notify_base_url ? { notifyBaseUrl: settings.payment.notify_base_url } : {}),
    }),
    ...((needs.table || needs.renditionClaims || needs.bans) && aws.dynamodb_endpoint
      ? { AWS__DYNAMODB_ENDPOINT: aws.dynamodb_endpoint }
      : {}),
    ...((needs.bucket || needs.accessLogs) && aws.s3_endpoint ? { AWS__S3_ENDPOINT: aws.s3_endpoint } : {}),
    ...(needs.mail && aws.ses_endpoint ? { AWS__SES_ENDPOINT: aws.ses_endpoint } : {}),
    // What the Lambda runtime itself provides.
    AWS_REGION: aws.region,
    AWS_LAMBDA_FUNCTION_NAME: `local-${group}`,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

/**
 * The workers (no routes) npm start also runs in their own processes; startLocalApp feeds them. Not the
 * ban mirror: there is no WAF locally (the functions' own check enforces the bans).
 */
const LOCAL_WORKERS: WorkerName[] = [
  'outbox-drain',
  'reconciler',
  'takedowns',
  'reminders',
  'bandwidth',
  'moderation',
  'account-lifecycle',
];

/** Every group and worker in its own process (infra/local/function-host.ts under tsx), started side by side. */
export async function startLocalFunctions(
  settings: Readonly<AppConfig>,
): Promise<Map<FunctionGroup | WorkerName, FunctionProcess>> {
  mkdirSync(resolve(settings.data_dir), { recursive: true });
  const started = await Promise.allSettled(
    [...FUNCTION_GROUPS, ...LOCAL_WORKERS].map((group) =>
      startFunctionProcess({
        name: group,
        host: resolve(PROJECT_ROOT, 'infra/local/function-host.ts'),
        module: resolve(PROJECT_ROOT, 'functions', group, 'handler.ts'),
        env: localFunctionEnvironment(group, settings),
        cwd: PROJECT_ROOT,
        execArgv: ['--import', 'tsx'],
      }),
    ),
  );
  const running = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed) {
    await Promise.allSettled(running.map((fn) => fn.stop()));
    throw failed.reason;
  }
  return new Map(running.map((fn) => [fn.name as FunctionGroup | WorkerName, fn]));
}

export interface RunningApp {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/**
 * The address the local server listens on: loopback unless `HOST` says otherwise (e.g. HOST=0.0.0.0 to be
 * reached from another machine). It holds a well-known administrator password, the static upload token
 * and the mock cashier (infra/config/local.json), so it is never on the network by default.
 */
export function localListenHost(env: Record<string, string | undefined> = process.env): string {
  return env.HOST?.trim() || '127.0.0.1';
}

export interface LocalAppOptions {
  port?: number;
  /** The interface to listen on; localListenHost() when absent. */
  host?: string;
  /** The groups already running in their own processes (startLocalFunctions); absent: in this process. */
  functions?: Map<FunctionGroup | WorkerName, FunctionProcess>;
}

export async function startLocalApp(options: LocalAppOptions = {}): Promise<RunningApp> {
  // A table made before the sharded listings is brought to them, indexes and items (docs/DEPLOYMENT.md).
  await ensureTable(dynamoClient(config.aws) as never, config.table_name, {
    table: new Table(dynamoClient(config.aws), config.table_name),
    listingShards: config.listing_shards,
    report: (lines) => console.log(['Local table migrated to the current key shape:', ...lines].join('\n')),
  });
  await ensureBucket(s3Client(config.aws), config.bucket_name);
  await ensureBucket(s3Client(config.aws), config.access_log_bucket_name);
  // The embedded master key is made on the first start, not on the first secret, so it can be backed up.
  await openMasterKey(config);
  const storage = new FileStorage(s3Client(config.aws), config.bucket_name);
  const table = new Table(dynamoClient(config.aws), config.table_name);

  const { functions } = options;
  // A group without a process of its own (a test that starts only some) runs in this process.
  const loadHandler = async (group: FunctionGroup): Promise<GroupHandler> => {
    const fn = functions?.get(group);
    return fn ? (event, context) => fn.invoke(event, context) : loadGroupHandler(group);
  };
  const edge = localEdge(table, config.hotlink);
  const accessLog = localAccessLog(new AccessLogStore(s3Client(config.aws), config.access_log_bucket_name));
  const port = options.port ?? config.port;
  const linkOrigin = loopbackOrigin(config.base_url, port);
  const server = createLocalServer({
    loadHandler,
    ...(config.http.cors_origins ? { corsOrigins: config.http.cors_origins } : {}),
    // The local server plays the CDN: the origin secret on every request (infra/local/front-door.ts).
    edgeHeaders: localEdgeHeaders(resolve(config.data_dir)),
    // The web console at / and /console/* with its CSP, as the CDN serves it (infra/local/console.ts).
    console: {
      directory: resolve(PROJECT_ROOT, 'web', 'dist'),
      uploadOrigins: config.aws.s3_endpoint ? [new URL(config.aws.s3_endpoint).origin] : [],
    },
    // GET /i/<key> streams from storage, as CloudFront serves it from S3 in AWS (no Lambda size cap); a key
    // on the deny-list of taken-down files is 404, and an owner's rules 403, as the /i/* edge function answers.
    direct: (request, response, url) => serveStoredFileLocally(storage, request, response, url, edge),
    onError: (error) => log.error('local server failed a request', { error }),
    // A direct upload over the Lambda payload limit is refused in the words of one just over its own.
    tooLarge: (routeKey) =>
      routeKey === 'POST /api/v1/upload' ? directUploadTooLarge(config.upload.max_bytes) : undefined,
    ...(linkOrigin ? { linkOrigin } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, options.host ?? localListenHost(), () => resolve());
  });
  // The CDN's log records of every /i/ answer, written to the access-log bucket as CloudFront delivers them.
  server.prependListener('request', accessLog.record);
  const address = server.address() as AddressInfo;
  // order.paid leaves the outbox as in AWS: the table's stream feeds the outbox-drain function.
  const drainFn = functions?.get('outbox-drain');
  const outboxDrain = startLocalOutboxDrain({
    aws: config.aws,
    tableName: config.table_name,
    ...(drainFn ? { invoke: (event) => drainFn.invoke(event as never) } : {}),
  });
  // Every new file classified as in AWS: the table's stream feeds the moderation worker (docs/MODERATION.md).
  const moderationFn = functions?.get('moderation');
  const moderation = config.moderation.enabled
    ? await startLocalModeration({
        aws: config.aws,
        tableName: config.table_name,
        ...(moderationFn ? { invoke: (event) => moderationFn.invoke(event as never) } : {}),
      })
    : undefined;
  // The scheduled workers on timers, as the stack's schedules run them in AWS: pending channel orders
  // reconciled, renewal reminders mailed, the back office's takedowns put on the deny-list this server
  // reads (no CDN to invalidate here).
  const schedule = (name: WorkerName, intervalMs: number) => {
    const fn = functions?.get(name);
    return startLocalSchedule(name, intervalMs, fn && ((event: unknown) => fn.invoke(event as never)));
  };
  // The reconciler fans out as its schedule does in AWS: one invocation per range of shards, at once.
  const reconciler = functions?.get('reconciler');
  const fannedOut =
    reconciler &&
    ((event: unknown) =>
      Promise.all(
        shardRanges(config.listing_shards).map((shards) =>
          reconciler.invoke({ ...(event as object), shards } as never),
        ),
      ));
  const schedules = [
    startLocalSchedule('reconciler', config.payment.reconcile.local_interval_seconds * 1000, fannedOut),
    schedule('reminders', config.billing.local_interval_seconds * 1000),
    schedule('takedowns', LOCAL_TAKEDOWN_INTERVAL_MS),
    schedule('bandwidth', config.bandwidth.local_interval_seconds * 1000),
    schedule('account-lifecycle', LOCAL_LIFECYCLE_INTERVAL_MS),
    // Webhook deliveries due again (the stack's WebhookRetrySchedule): the drain with its own request.
    startLocalSchedule(
      'outbox-drain',
      LOCAL_WEBHOOK_RETRY_INTERVAL_MS,
      drainFn && (() => drainFn.invoke({ action: 'webhook-retries' } as never)),
    ),
  ];
  return {
    server,
    url: `http://localhost:${address.port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await outboxDrain.stop();
      await moderation?.stop();
      await accessLog.stop();
      for (const scheduled of schedules) await scheduled.stop();
      if (functions) await Promise.allSettled([...functions.values()].map((fn) => fn.stop()));
    },
  };
}
