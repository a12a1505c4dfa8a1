// npm start's stand-ins in processes of their own (s3rver and the SES stand-in here, DynamoDB Local by
// Java), each supervised: one that ends unasked is started again on its port with its data folder, so the
// running functions keep working, and one log line names it and the cause.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from '#lib/platform/log.ts';

export interface StandInProcess {
  endpoint: string;
  pid: number | undefined;
  /** Settles, asked or not, with what ended the process: `signal SIGKILL`, `exit code 1`. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export function exitCause(child: ChildProcess): Promise<string> {
  return new Promise((done) =>
    child.once('exit', (code, signal) => done(signal ? `signal ${signal}` : `exit code ${code}`)),
  );
}

/** s3rver (infra/local/s3-local.ts) or the SES stand-in (ses-local.ts) in a child process of its own. */
export async function startStandInProcess(
  kind: 's3' | 'ses',
  options: { directory: string; port?: number },
): Promise<StandInProcess> {
  const entry = [fileURLToPath(import.meta.url), kind, resolve(options.directory), String(options.port ?? 0)];
  const child = spawn(process.execPath, ['--import', 'tsx', ...entry], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, STAND_IN_CHILD: '1' },
  });
  const exited = exitCause(child);
  const endpoint = await new Promise<string>((listening, failed) => {
    child.once('message', (message: { endpoint: string }) => listening(message.endpoint));
    void exited.then((cause) =>
      failed(new Error(`the ${kind} stand-in ended (${cause}) before it listened`)),
    );
  });
  return {
    endpoint,
    pid: child.pid,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Keeps a stand-in running: `start` again (same port and data) whenever its process ends unasked. */
export async function supervise(name: string, start: () => Promise<StandInProcess>) {
  let current = await start();
  let stopping = false;
  const watch = async (running: StandInProcess): Promise<void> => {
    const cause = await running.exited;
    for (let attempt = 1; !stopping; attempt++) {
      try {
        current = await start();
        if (stopping) return current.stop();
        log.warn('stand-in restarted', { stand_in: name, cause, endpoint: current.endpoint });
        return watch(current);
      } catch (error) {
        if (attempt === 5)
          return log.error('stand-in could not be restarted', { stand_in: name, cause, error });
        await new Promise((wait) => setTimeout(wait, 1000));
      }
    }
  };
  void watch(current);
  return {
    endpoint: current.endpoint,
    stop: () => {
      stopping = true;
      return current.stop();
    },
  };
}

// Entry of the child process started above; it ends with npm start (its IPC channel closes).
if (process.env.STAND_IN_CHILD === '1' && import.meta.url.endsWith(process.argv[1] ?? '\0')) {
  const [kind, directory = '', port] = process.argv.slice(2);
  const options = { directory, port: Number(port) };
  const running =
    kind === 's3'
      ? await (await import('./s3-local.ts')).startS3Local(options)
      : await (await import('./ses-local.ts')).startSesLocal(options);
  process.send?.({ endpoint: running.endpoint });
  process.once('SIGTERM', () => void running.stop().then(() => process.exit(0)));
  process.once('disconnect', () => process.exit(0));
}
