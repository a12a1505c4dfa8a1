// Starts AWS's DynamoDB Local (the jar inside the amplify-dynamodb-simulator npm package) with Java.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { exitCause, type StandInProcess } from './stand-ins.ts';

export class JavaMissingError extends Error {
  constructor(detail: string) {
    super(
      [
        `DynamoDB Local needs Java 17 or newer, and ${detail}.`,
        'Install it, then run the command again:',
        '  Debian/Ubuntu:  sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless',
        '  Fedora/RHEL:    sudo dnf install -y java-17-openjdk-headless',
        '  macOS:          brew install openjdk@17',
      ].join('\n'),
    );
    this.name = 'JavaMissingError';
  }
}

/** Fails with install instructions unless a Java 17+ runtime is on PATH. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new JavaMissingError('no `java` command was found');
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${probe.stderr}${probe.stdout}`);
  const major = match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : 0;
  if (major < 17) throw new JavaMissingError(`the \`java\` found is version ${major || 'unknown'}`);
}

export function emulatorFolder(): string {
  const require = createRequire(import.meta.url);
  // The package's own entry needs the Amplify CLI we override away; only its folder is used.
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

/**
 * A port to hand a stand-in or the server before it listens. Drawn below Linux's ephemeral range (32768 and
 * up), where outgoing connections take their local ports: a port the kernel picked for us there could be
 * taken by any client socket before the stand-in binds it (seen when two suites start stacks at once).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

function canListen(port: number): Promise<boolean> {
  return listenOn(port).then(
    () => true,
    () => false,
  );
}

function listenOn(port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** `dbPath` keeps the data in a folder (dev server); without it the database lives in memory (tests). */
export async function startDynamoLocal(
  options: { dbPath?: string; port?: number } = {},
): Promise<StandInProcess> {
  assertJava();
  const folder = emulatorFolder();
  const port = options.port ?? (await freePort());
  const storage = options.dbPath ? ['-dbPath', resolve(options.dbPath)] : ['-inMemory'];
  if (options.dbPath) mkdirSync(resolve(options.dbPath), { recursive: true });
  const child: ChildProcess = spawn(
    'java',
    [
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Xmx512m',
      `-Djava.library.path=${join(folder, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(folder, 'DynamoDBLocal.jar'),
      '-sharedDb',
      '-disableTelemetry',
      ...storage,
      '-port',
      String(port),
    ],
    { cwd: folder, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = exitCause(child);

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };

  // A JVM's start takes seconds alone and much longer on a busy machine (a whole suite on two cores):
  // give it a minute and a half before calling it stuck.
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`DynamoDB Local exited (${child.exitCode}): ${stderr.trim()}`);
    if (await answers(endpoint)) return { endpoint, exited, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `DynamoDB Local did not answer on ${endpoint} within ${START_WAIT_MS / 1000} s: ${stderr.trim()}`,
      );
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

const START_WAIT_MS = 90_000;

async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        authorization:
          'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      body: '{}',
      signal: AbortSignal.timeout(1000),
    });
    return response.status === 200;
  } catch {
    return false;
  }
}
