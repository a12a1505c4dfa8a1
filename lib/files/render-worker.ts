// A render process (render-processes.ts starts it): renders one job at a time with sharp and answers over
// its IPC channel. It imports the renderer alone, so it loads sharp and nothing of the function: no settings,
// no AWS SDK, and its environment holds no credentials. Bundled beside the render function's index.mjs as
// render-worker.mjs (infra/bundling.ts).
import { AppError } from '#lib/core/errors.ts';
import { type RenderedImage, type RenderLimits, renderRendition } from './render.ts';
import type { OutputFormat, RenderableSource, RenditionParams } from './rendition-query.ts';
import type { WatermarkSpec } from './watermark.ts';

export interface RenderJob {
  source: Uint8Array;
  sourceFormat: RenderableSource;
  params: RenditionParams;
  /** Several (`f=auto`): the smallest of them is answered. */
  output: OutputFormat | readonly OutputFormat[];
  limits: RenderLimits;
  /** The owner's plan's watermark (docs/IMAGES.md "Watermarks"). */
  mark?: WatermarkSpec | undefined;
}

/** What a render process says: it is ready, or one job's outcome. */
export type RenderReply =
  | { ready: true }
  | { image: RenderedImage }
  /** The renderer refused the image (415, 422): the refusal to answer with. */
  | { refusal: Pick<AppError, 'errorName' | 'message' | 'data'> }
  /** Anything else (sharp missing, say): the service's fault. */
  | { fault: string };

const reply = (message: RenderReply) => process.send?.(message);

async function run(job: RenderJob): Promise<RenderReply> {
  const source = Buffer.from(job.source.buffer, job.source.byteOffset, job.source.byteLength);
  try {
    return {
      image: await renderRendition(source, job.sourceFormat, job.params, job.output, job.limits, job.mark),
    };
  } catch (error) {
    if (error instanceof AppError)
      return { refusal: { errorName: error.errorName, message: error.message, data: error.data } };
    return { fault: error instanceof Error ? error.message : String(error) };
  }
}

process.on('message', (job: RenderJob) => {
  run(job).then(reply, (error: unknown) => reply({ fault: String(error) }));
});
// The function that started it went away (or dropped it): nothing is left to render for.
process.on('disconnect', () => process.exit(0));
reply({ ready: true });
