// Renders in processes of their own (docs/IMAGES.md "Bounded renders"): each render runs in a child Node
// process (render-worker.ts) that is killed, not abandoned, once the render outlives
// `images.render_timeout_seconds` or its resident memory passes `images.render_memory_mb`; its memory and
// CPU are the system's again when the 422 is answered. A worker thread would not do: terminating one waits
// for the native call in progress, and libheif's AVIF encoder cannot be interrupted. Each concurrent render
// has its own process, so a slow one never delays another (a Lambda container has one at a time); an idle
// process is kept for the next render, so sharp loads once per process, not per render.
import { type ChildProcess, fork } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AppError, errors } from '#lib/core/errors.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import type { RenderedImage } from './render.ts';
import type { RenderJob, RenderReply } from './render-worker.ts';

/** The render process's script beside the function's bundle (infra/bundling.ts builds it under this name). */
export const RENDER_WORKER_BUNDLE = 'render-worker.mjs';

export interface RenderProcessScript {
  file: string;
  /** Node's options before it (tsx for the TypeScript source). */
  execArgv: string[];
}

/** The script a render process runs: beside the bundle when this code is bundled, else the source under tsx. */
export function renderProcessScript(moduleUrl = import.meta.url): RenderProcessScript {
  return moduleUrl.endsWith('.ts')
    ? { file: fileURLToPath(new URL('./render-worker.ts', moduleUrl)), execArgv: ['--import', 'tsx'] }
    : { file: fileURLToPath(new URL(`./${RENDER_WORKER_BUNDLE}`, moduleUrl)), execArgv: [] };
}

export interface RenderProcessesDeps {
  script: RenderProcessScript;
  /**
   * `images.render_timeout_seconds`: from the job's hand-over to a ready process. A process's own start is
   * bounded apart (PROCESS_START_MS): a slow start is the machine's, never the image's, so it must not
   * become the image's remembered 422.
   */
  timeoutSeconds: number;
  /** `images.render_memory_mb`: the resident memory a render process may reach. */
  memoryMb: number;
  /** Idle processes kept for later renders; more are ended as their renders finish. */
  idleMax: number;
}

/** A render process's environment: enough to start Node. No credentials, no settings reach it. */
const PASSED_VARIABLES = ['PATH', 'LD_LIBRARY_PATH', 'TMPDIR', 'TZ', 'LANG'];
/** How often a running render's resident memory is read (Linux's /proc; elsewhere it is not watched). */
const MEMORY_CHECK_MS = 100;
const PAGE_BYTES = 4096;
/** A render process that is not ready by then (Node and sharp loaded) is killed: 503, not remembered. */
const PROCESS_START_MS = 30_000;

type Stop = 'deadline' | 'memory' | 'start';

/** A process's resident bytes, or undefined where /proc cannot tell. */
async function residentBytes(pid: number | undefined): Promise<number | undefined> {
  const statm = await readFile(`/proc/${pid}/statm`, 'utf8').catch(() => undefined);
  const pages = Number(statm?.split(' ')[1]);
  return Number.isFinite(pages) ? pages * PAGE_BYTES : undefined;
}

export class RenderProcesses {
  private readonly idle: ChildProcess[] = [];
  private running = 0;

  constructor(private readonly deps: RenderProcessesDeps) {}

  /** Renders running now, each in its own process. */
  get busy(): number {
    return this.running;
  }

  /** One rendition, or the renderer's 415/422; 422 for a render its process was killed for. */
  async render(job: RenderJob): Promise<RenderedImage> {
    this.running += 1;
    try {
      return await this.run(job);
    } finally {
      this.running -= 1;
    }
  }

  private start(): ChildProcess {
    const env = Object.fromEntries(
      PASSED_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
    );
    const child = fork(this.deps.script.file, [], {
      execArgv: this.deps.script.execArgv,
      env,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('exit', () => {
      const at = this.idle.indexOf(child);
      if (at >= 0) this.idle.splice(at, 1);
    });
    return child;
  }

  private run(job: RenderJob): Promise<RenderedImage> {
    const reused = this.idle.pop();
    const child = reused ?? this.start();
    child.ref();
    child.channel?.ref();
    return new Promise<RenderedImage>((resolve, reject) => {
      let stopped: Stop | undefined;
      let resident: number | undefined;
      let settled = false;
      const stop = (reason: Stop) => {
        // A memory reading that comes back after the job must not stop the process's next one.
        if (settled) return;
        stopped ??= reason;
        child.kill('SIGKILL');
      };
      let deadline = setTimeout(() => stop('start'), PROCESS_START_MS);
      const hand = () => {
        clearTimeout(deadline);
        deadline = setTimeout(() => stop('deadline'), this.deps.timeoutSeconds * 1000);
        child.send(job);
      };
      const watch = setInterval(() => {
        residentBytes(child.pid).then((bytes) => {
          resident = bytes;
          if (bytes !== undefined && bytes > this.deps.memoryMb * 1024 * 1024) stop('memory');
        });
      }, MEMORY_CHECK_MS);
      const settle = () => {
        settled = true;
        clearTimeout(deadline);
        clearInterval(watch);
        child.off('message', onMessage);
        child.off('exit', onExit);
        child.off('error', onError);
      };
      const onMessage = (reply: RenderReply) => {
        if ('ready' in reply) return hand();
        settle();
        if ('fault' in reply) {
          child.kill('SIGKILL');
          return reject(new Error(`render process: ${reply.fault}`));
        }
        this.park(child, resident);
        if ('refusal' in reply) {
          const { errorName, message, data } = reply.refusal;
          return reject(new AppError(errorName, message, { data }));
        }
        const { body } = reply.image;
        resolve({ ...reply.image, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) });
      };
      // Answered only once the process is gone: its memory and CPU are free when the 422 is sent.
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        settle();
        reject(this.stopped(stopped, { pid: child.pid, code, signal }));
      };
      // It could not be started or reached: the service's fault, not the image's.
      const onError = (error: Error) => {
        settle();
        child.kill('SIGKILL');
        reject(error);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.once('error', onError);
      if (reused) hand();
    });
  }

  /** Kept for the next render, unless enough are idle or this one grew past half its allowance. */
  private park(child: ChildProcess, resident: number | undefined): void {
    const grown = resident !== undefined && resident > (this.deps.memoryMb * 1024 * 1024) / 2;
    if (grown || this.idle.length >= this.deps.idleMax) {
      child.kill('SIGKILL');
      return;
    }
    // Idle, it keeps no one waiting: neither a script's exit nor a test's end.
    child.unref();
    child.channel?.unref();
    this.idle.push(child);
  }

  /** What a render whose process ended answers: 422, remembered like any refusal of this image. */
  private stopped(reason: Stop | undefined, exit: Record<string, unknown>): AppError {
    recordMetric('RendersStopped', { dimensions: { reason: reason ?? 'crash' } });
    log.warn('render process stopped', { reason: reason ?? 'crash', ...exit });
    if (reason === 'start')
      return errors.serviceUnavailable('image: no render process could start; try again');
    if (reason === 'memory') {
      return errors.unprocessable(`image: the render needed over ${this.deps.memoryMb} MB and was stopped`, {
        render_memory_mb: this.deps.memoryMb,
      });
    }
    if (reason === 'deadline') {
      return errors.unprocessable(
        `image: the render took over ${this.deps.timeoutSeconds} seconds and was stopped`,
        { render_timeout_seconds: this.deps.timeoutSeconds },
      );
    }
    return errors.unprocessable('image: the renderer failed on this image');
  }
}
