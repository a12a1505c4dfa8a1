// Runs `npm start`'s entry (scripts/start.ts) as a child process, as a user would, and stops it cleanly; tells
// whether a process still exists.
import { type ChildProcess, spawn } from 'node:child_process';

export interface StartedService {
  url: string;
  dynamoEndpoint: string;
  /** npm start's SES stand-in: its inbox page, and every mail as JSON at `/store`. */
  inbox: string;
  pid: number;
  output: () => string;
  stop(): Promise<number | null>;
}

export async function startService(env: Record<string, string>): Promise<StartedService> {
  // As a user's shell would: no BASE_URL unless the caller sets one (the test setup exports one).
  const { BASE_URL: _testBaseUrl, ...inherited } = process.env;
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    env: { ...inherited, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // npm start's stand-ins and function processes may each take a minute on a busy machine.
  const deadline = Date.now() + 150_000;
  for (;;) {
    const listening = /API listening on (http:\/\/localhost:\d+)/.exec(output);
    const dynamo = /DynamoDB Local: (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
    const inbox = /SES: (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
    if (listening && dynamo && inbox) {
      return {
        url: listening[1]!,
        dynamoEndpoint: dynamo[1]!,
        inbox: inbox[1]!,
        pid: child.pid!,
        output: () => output,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      };
    }
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start did not listen within 45 s:\n${output}`);
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

/** Whether a process of this pid still exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
