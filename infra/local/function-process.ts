// Starts one function host (infra/local/function-host.ts) as a child process with exactly the environment
// given, and invokes it with API Gateway events: the local stand-in for one Lambda function.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Context } from 'aws-lambda';
import type { ApiEvent, ApiResult } from '#lib/http/event.ts';

export interface FunctionProcessOptions {
  name: string;
  /** The host script: the .ts source under tsx, or a built .mjs beside a bundle. */
  host: string;
  /** The handler module and its export (`index.mjs` + `handler` for a bundle). */
  module: string;
  exportName?: string;
  /** The function's whole environment: nothing of the parent's is inherited. */
  env: Record<string, string>;
  cwd: string;
  /** Node options before the host (e.g. `--import tsx`). */
  execArgv?: string[];
  /** One invocation at a time, as one Lambda container. */
  serial?: boolean;
  /** Run as this user (the deployed-shape test drops root so the code folder is really read-only). */
  uid?: number;
  gid?: number;
  /** Where the function's stdout and stderr go (default: this process's). */
  output?: 'inherit' | ((line: string, stream: 'stdout' | 'stderr') => void);
  startTimeoutMs?: number;
}

export interface FunctionProcess {
  name: string;
  invoke(event: ApiEvent, context?: Context): Promise<ApiResult>;
  stop(): Promise<void>;
}

export class FunctionStartError extends Error {
  constructor(name: string, reason: string) {
    super(`The ${name} function did not start: ${reason}`);
    this.name = 'FunctionStartError';
  }
}

function pipeLines(child: ChildProcess, output: (line: string, stream: 'stdout' | 'stderr') => void) {
  for (const stream of ['stdout', 'stderr'] as const) {
    let rest = '';
    child[stream]?.setEncoding('utf8');
    child[stream]?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) output(line, stream);
    });
    child[stream]?.on('end', () => {
      if (rest) output(rest, stream);
    });
  }
}

export async function startFunctionProcess(options: FunctionProcessOptions): Promise<FunctionProcess> {
  const output = options.output ?? 'inherit';
  // stdout and stderr alike: inherited, or piped to `output` line by line.
  const stdout = output === 'inherit' ? 'inherit' : 'pipe';
  const child = spawn(
    process.execPath,
    [
      ...(options.execArgv ?? []),
      options.host,
      options.module,
      options.exportName ?? 'handler',
      ...(options.serial ? ['--serial'] : []),
    ],
    {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', stdout, stdout, 'ipc'],
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    },
  );
  if (output !== 'inherit') pipeLines(child, output);

  const port = await new Promise<number>((resolve, reject) => {
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(new FunctionStartError(options.name, reason));
    };
    // Generous: a function's process compiles its imports on start, slow on a busy machine (a suite on two cores).
    const timer = setTimeout(() => fail('no answer in time'), options.startTimeoutMs ?? 90_000);
    child.on('message', (message: { type?: string; port?: number; message?: string }) => {
      if (message.type === 'ready' && message.port) {
        clearTimeout(timer);
        resolve(message.port);
      } else if (message.type === 'failed') fail(message.message ?? 'init failed');
    });
    child.on('exit', (code) => fail(`exited with code ${code}`));
    child.on('error', (error) => fail(error.message));
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });

  return {
    name: options.name,
    async invoke(event) {
      const response = await fetch(`http://127.0.0.1:${port}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event }),
      });
      const answer = (await response.json()) as { result?: ApiResult; error?: unknown };
      if (answer.error) {
        // API Gateway's answer to a function that threw: a bare 500, the error only in the function's log.
        return {
          statusCode: 500,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'Internal Server Error' }),
        };
      }
      return answer.result as ApiResult;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
