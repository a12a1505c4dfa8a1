// npm start's stand-ins in processes of their own (s3rver and the SES stand-in here, DynamoDB Local by
// Java), supervised: one that ends unasked is started again on its port with its data folder, so the
// running functions carry on, and one log line names it and the cause.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from '#lib/platform/log.ts';

export interface StandInProcess {
  endpoint: string;
  /** Settles, asked or not, with what ended the process: `signal SIGKILL`, `exit code 1`. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export const exitCause = (child: ChildProcess) =>
  new Promise<string>((done) =>
    child.once('exit', (code, signal) => done(signal ? `signal ${signal}` : `exit code ${code}`)),
  );

/** s3rver (s3-local.ts) or the SES stand-in (ses-local.ts) in a child process, its data in `<dataDir>/<kind>`. */
export async function startStandInProcess(
  kind: 's3' | 'ses',
  dataDir: string,
  port = 0,
): Promise<StandInProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), kind, join(dataDir, kind), `${port}`],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, STAND_IN_CHILD: '1' },
    },
  );
  const exited = exitCause(child);
  const endpoint = await new Promise<string>((listening, failed) => {
    child.once('message', (message: { endpoint: string }) => listening(message.endpoint));
    void exited.then((cause) =>
      failed(new Error(`the ${kind} stand-in ended (${cause}) before it listened`)),
    );
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return { endpoint, exited, stop };
}

/** Keeps a stand-in running: `start` again (same port and data) whenever its process ends unasked. */
export async function supervise(name: string, start: () => Promise<StandInProcess>) {
  let current = await start();
  let stopping = false;
  const watch = async (cause: string): Promise<void> => {
    for (let attempt = 1; !stopping; attempt++) {
      try {
        current = await start();
        if (stopping) return current.stop();
        log.warn('stand-in restarted', { stand_in: name, cause, endpoint: current.endpoint });
        return void current.exited.then(watch);
      } catch (error) {
        if (attempt === 5)
          return log.error('stand-in could not be restarted', { stand_in: name, cause, error });
        await new Promise((wait) => setTimeout(wait, 1000));
      }
    }
  };
  void current.exited.then(watch);
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
  const { startS3Local } = await import('./s3-local.ts');
  const { startSesLocal } = await import('./ses-local.ts');
  const running = await (kind === 's3' ? startS3Local : startSesLocal)(options);
  process.send?.({ endpoint: running.endpoint });
  process.once('SIGTERM', () => void running.stop().then(() => process.exit(0)));
  process.once('disconnect', () => process.exit(0));
}
