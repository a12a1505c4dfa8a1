// Where a running `npm start` can be reached: it writes its addresses into its data folder when it is up
// and takes them back when it stops, so the one-off scripts (`usage:recount`, `admin:create`,
// `migrate:shards`, `tour`) find the local stand-ins without being told their ports.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const RUNNING_STACK_FILE = 'running.json';

export interface RunningStack {
  pid: number;
  api_url: string;
  dynamodb_endpoint: string;
  s3_endpoint: string;
  /** The SES stand-in: its inbox page, and every mail as JSON at `/store`. */
  inbox_url: string;
  table_name: string;
  bucket_name: string;
}

export function recordRunningStack(dataDir: string, stack: RunningStack): () => void {
  const file = join(dataDir, RUNNING_STACK_FILE);
  writeFileSync(file, `${JSON.stringify(stack, null, 2)}\n`);
  return () => rmSync(file, { force: true });
}

/** The stack `npm start` recorded in `dataDir`, if that process still runs. */
export function readRunningStack(dataDir: string): RunningStack | undefined {
  let stack: RunningStack;
  try {
    stack = JSON.parse(readFileSync(join(resolve(dataDir), RUNNING_STACK_FILE), 'utf8')) as RunningStack;
  } catch {
    return undefined;
  }
  return isAlive(stack.pid) ? stack : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class NoRunningStackError extends Error {}

/**
 * Points this process at the local stand-ins of a running `npm start`, unless the caller chose a table
 * (`TABLE_NAME`, a deployed stage) or an endpoint itself. Sets the same overrides `npm start` gives its
 * functions, before any module reads the settings.
 */
export function useRunningStack(
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): RunningStack | undefined {
  if (env.TABLE_NAME || env.AWS__DYNAMODB_ENDPOINT) return undefined;
  const stack = readRunningStack(dataDir);
  if (!stack) {
    throw new NoRunningStackError(
      `No local stack is running in ${resolve(dataDir)}: start it with \`npm start\` in another terminal, ` +
        'or set TABLE_NAME (and AWS credentials) to use a deployed table.',
    );
  }
  env.AWS__DYNAMODB_ENDPOINT = stack.dynamodb_endpoint;
  env.AWS__S3_ENDPOINT = stack.s3_endpoint;
  // The names it was started with, should its environment have chosen others than the config file.
  env.TABLE_NAME = stack.table_name;
  env.BUCKET_NAME = stack.bucket_name;
  return stack;
}
