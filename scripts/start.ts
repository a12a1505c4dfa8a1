// `npm start`: the whole API on http://localhost:PORT, on DynamoDB Local and s3rver that it starts itself.
import { join, resolve } from 'node:path';
import { ConfigError, loadConfig } from '../lib/config/load.ts';
import { JavaMissingError, startDynamoLocal } from '../lib/local/dynamodb-local.ts';
import { startS3Local } from '../lib/local/s3-local.ts';

async function main(): Promise<void> {
  // The SDK's notice that its 2027 releases need Node 22: the lock file pins today's, which run on 20.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Validate first, so a bad config stops us with its message before anything starts.
  const settings = loadConfig();
  const dataDir = resolve(settings.data_dir);

  const dynamo = await startDynamoLocal({ dbPath: join(dataDir, 'dynamodb') });
  const s3 = await startS3Local({ directory: join(dataDir, 's3') }).catch(async (error: unknown) => {
    await dynamo.stop();
    throw error;
  });
  // The stand-ins' addresses reach every module the normal way: as configuration overrides.
  process.env.AWS__DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.AWS__S3_ENDPOINT = s3.endpoint;
  process.env.DATA_DIR = dataDir;
  // A localhost base_url names this server: it follows PORT unless BASE_URL says otherwise, so upload
  // and cashier links work on any port.
  const base = new URL(settings.base_url);
  if (!process.env.BASE_URL && base.hostname === 'localhost' && settings.port !== 0) {
    base.port = String(settings.port);
    process.env.BASE_URL = base.origin;
  }

  let app: Awaited<ReturnType<typeof import('../lib/local/app.ts').startLocalApp>> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    await app?.close();
    await Promise.allSettled([s3.stop(), dynamo.stop()]);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  try {
    const { startLocalApp } = await import('../lib/local/app.ts');
    app = await startLocalApp();
  } catch (error) {
    await Promise.allSettled([s3.stop(), dynamo.stop()]);
    throw error;
  }
  console.log(
    [
      `API listening on ${app.url}  (try: curl ${app.url}/healthz)`,
      `  data: ${dataDir}  DynamoDB Local: ${dynamo.endpoint}  S3 (s3rver): ${s3.endpoint}`,
      '  Ctrl+C stops it; data stays for the next start.',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof JavaMissingError) {
    console.error(error.message);
  } else {
    console.error('Failed to start:', error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
