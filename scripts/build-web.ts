// `npm run build:web`: builds the web console (web/, Vite) into web/dist. `ensureWebBuild` does it only
// when web/dist is missing or older than a source, for npm start and the console's browser tests. Builds
// go to a scratch folder that then replaces web/dist, under a lock, so a server reading web/dist (or a
// second test process building at the same time) never sees it half written.
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_ROOT = fileURLToPath(new URL('../web', import.meta.url));
export const WEB_DIST = join(WEB_ROOT, 'dist');
const LOCK = join(WEB_ROOT, '.build.lock');
/** A lock older than this is left over from a killed build. */
const STALE_LOCK_MS = 120_000;

function newestSource(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestSource(join(path, name))));
}

/** Whether `root`/dist/index.html is newer than every source of the console (src, index.html, config). */
export function webBuildIsCurrent(root = WEB_ROOT): boolean {
  const index = join(root, 'dist', 'index.html');
  if (!existsSync(index)) return false;
  const sources = ['src', 'public', 'index.html', 'vite.config.ts'].map((name) => join(root, name));
  return statSync(index).mtimeMs >= Math.max(...sources.filter(existsSync).map(newestSource));
}

async function withBuildLock<T>(work: () => Promise<T>): Promise<T> {
  let handle: number | undefined;
  while (handle === undefined) {
    try {
      handle = openSync(LOCK, 'wx');
    } catch {
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) unlinkSync(LOCK);
      } catch {
        // Released meanwhile.
      }
      await new Promise((wait) => setTimeout(wait, 200));
    }
  }
  try {
    return await work();
  } finally {
    closeSync(handle);
    rmSync(LOCK, { force: true });
  }
}

async function buildUnlocked(): Promise<void> {
  const { build } = await import('vite');
  const scratch = join(WEB_ROOT, `.build-${process.pid}`);
  const previous = join(WEB_ROOT, `.previous-${process.pid}`);
  // A production build whoever asks (vitest sets NODE_ENV=test, which Vite would honour: a larger bundle).
  const callerNodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({
      configFile: join(WEB_ROOT, 'vite.config.ts'),
      mode: 'production',
      logLevel: 'warn',
      build: { outDir: scratch, emptyOutDir: true },
    });
    if (existsSync(WEB_DIST)) renameSync(WEB_DIST, previous);
    renameSync(scratch, WEB_DIST);
  } finally {
    if (callerNodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = callerNodeEnv;
    rmSync(scratch, { recursive: true, force: true });
    rmSync(previous, { recursive: true, force: true });
  }
}

export async function ensureWebBuild(): Promise<void> {
  if (webBuildIsCurrent()) return;
  // Another process may have built it while this one waited for the lock.
  await withBuildLock(async () => {
    if (!webBuildIsCurrent()) await buildUnlocked();
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  withBuildLock(buildUnlocked).then(
    () => console.log(`Built the web console into ${WEB_DIST}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
