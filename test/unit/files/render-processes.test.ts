// Renders in processes of their own (lib/files/render-processes.ts): a render past its deadline or over its
// memory is stopped by killing its process, which is gone when the 422 comes back; a render that finishes
// leaves its process for the next one; nothing of the function's environment reaches it.
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '#lib/core/errors.ts';
import { buildRenderer } from '#lib/files/build-renditions.ts';
import { RenderProcesses } from '#lib/files/render-processes.ts';
import type { RenderJob } from '#lib/files/render-worker.ts';
import { config } from '#lib/platform/config/index.ts';
import { tapLogging } from '#lib/platform/log.ts';
import { photoJpeg, slowToRenderPng } from '#test/support/images.ts';
import { isAlive } from '#test/support/start-process.ts';

const LIMITS = { maxInputPixels: 268_402_689, maxFrames: 1000, avifMaxPixels: 268_402_689 };

function renderer(images: Partial<typeof config.images> = {}) {
  return buildRenderer({ ...config.images, ...images });
}

function job(source: Buffer, fields: Partial<RenderJob> = {}): RenderJob {
  return {
    source,
    sourceFormat: 'jpeg',
    params: { fit: 'inside', quality: 75, width: 64 },
    output: 'webp',
    limits: LIMITS,
    ...fields,
  };
}

/** The pids of the render processes the renderer said it stopped while `work` ran, with its outcome. */
async function stoppedDuring<T>(work: () => Promise<T>) {
  const stopped: Array<{ reason: string; pid: number }> = [];
  const previous = tapLogging((line) => {
    const entry = JSON.parse(line) as { message?: string; reason?: string; pid?: number };
    if (entry.message === 'render process stopped') stopped.push({ reason: entry.reason!, pid: entry.pid! });
  });
  try {
    const outcome = await work().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    return { outcome, stopped };
  } finally {
    tapLogging(previous);
  }
}

afterEach(() => tapLogging(undefined));

describe('render processes', () => {
  it('renders in a process of its own, and leaves nothing running', async () => {
    const processes = renderer();
    const rendered = await processes.render(job(await photoJpeg(320, 240)));

    expect(await sharp(rendered.body).metadata()).toMatchObject({ format: 'webp', width: 64, height: 48 });
    expect(rendered).toMatchObject({ format: 'webp', contentType: 'image/webp', width: 64, height: 48 });
    expect(Buffer.isBuffer(rendered.body)).toBe(true);
    expect(processes.busy).toBe(0);
  });

  it("answers the renderer's own refusal as it is (415), and renders again after it", async () => {
    const processes = renderer();
    const error = await processes.render(job(Buffer.from('not a jpeg at all'))).catch((caught) => caught);

    expect(error).toBeInstanceOf(AppError);
    expect([error.errorName, error.message]).toEqual([
      'unsupported_media_type',
      'image: the bytes are not a readable image/jpeg image',
    ]);
    expect((await processes.render(job(await photoJpeg(320, 240)))).width).toBe(64);
  });

  it('kills a render past its deadline, WebP and AVIF (whose encoder cannot be interrupted) alike', async () => {
    // 256 megapixels of noise to 3840 x 3840 takes about 9 s to WebP here, longer to AVIF; the limit is 1 s.
    const source = await slowToRenderPng();
    const processes = renderer({ render_timeout_seconds: 1 });
    for (const output of ['webp', 'avif'] as const) {
      const started = performance.now();
      const { outcome, stopped } = await stoppedDuring(() =>
        processes.render(
          job(source, {
            sourceFormat: 'png',
            params: { fit: 'fill', quality: 75, width: 3840, height: 3840 },
            output,
          }),
        ),
      );
      const error = (outcome as { error?: AppError }).error;

      expect(error, output).toBeInstanceOf(AppError);
      expect([error!.errorName, error!.message], output).toEqual([
        'unprocessable',
        'image: the render took over 1 seconds and was stopped',
      ]);
      expect(error!.data).toEqual({ render_timeout_seconds: 1 });
      // Answered once its process is gone, long before the encode would have finished.
      expect(stopped.map((entry) => entry.reason)).toEqual(['deadline']);
      expect(isAlive(stopped[0]!.pid), output).toBe(false);
      expect(performance.now() - started, output).toBeLessThan(6_000);
      expect(processes.busy).toBe(0);
    }
  }, 30_000);

  it("does not count a render process's slow start against the image's deadline", async () => {
    // A 1 s deadline and a process ready only after 1.5 s: the render still runs, in well under its second,
    // so a loaded machine never turns into a 422 that would be remembered for the image.
    const slowStart = new RenderProcesses({
      script: {
        file: fileURLToPath(new URL('../../support/slow-start-render-worker.ts', import.meta.url)),
        execArgv: ['--import', 'tsx'],
      },
      timeoutSeconds: 1,
      memoryMb: 1024,
      idleMax: 0,
    });
    const photo = await photoJpeg(320, 240);
    const { outcome, stopped } = await stoppedDuring(() => slowStart.render(job(photo)));

    expect(outcome).toMatchObject({ value: { format: 'webp', width: 64 } });
    expect(stopped).toEqual([]);
  }, 30_000);

  it('kills a render whose process passes images.render_memory_mb', async () => {
    const processes = renderer({ render_memory_mb: 160, render_timeout_seconds: 20 });
    const source = await slowToRenderPng();
    const { outcome, stopped } = await stoppedDuring(() =>
      processes.render(
        job(source, {
          sourceFormat: 'png',
          params: { fit: 'fill', quality: 75, width: 3840, height: 3840 },
          // AVIF's encoder holds hundreds of MB for 3840 x 3840 (the bound in pixels is lifted here).
          output: 'avif',
        }),
      ),
    );
    const error = (outcome as { error?: AppError }).error;

    expect(error).toBeInstanceOf(AppError);
    expect([error!.errorName, error!.message]).toEqual([
      'unprocessable',
      'image: the render needed over 160 MB and was stopped',
    ]);
    expect(stopped.map((entry) => entry.reason)).toEqual(['memory']);
    expect(isAlive(stopped[0]!.pid)).toBe(false);
  }, 30_000);
});
