// The renderer: sharp (libvips) turns an original's bytes into one rendition (docs/IMAGES.md).
// (Contract stub: the renderer lands in the next commit.)
import { errors } from '#lib/core/errors.ts';
import type { OutputFormat, RenderableSource, RenditionParams } from './rendition-query.ts';

export interface RenderLimits {
  /** `images.max_input_pixels`: over this (all frames together) the source is 422, before decoding. */
  maxInputPixels: number;
  /** `images.max_frames`: an animation with more frames is 422. */
  maxFrames: number;
  /** `images.render_timeout_seconds`: a longer render is abandoned with 422. */
  timeoutSeconds: number;
}

export interface RenderedImage {
  body: Buffer;
  format: OutputFormat;
  contentType: string;
  width: number;
  height: number;
}

/**
 * One rendition of `source` (whose key says it is `sourceFormat`): 415 when the bytes are not a readable
 * image of that format, 422 over the limits; never enlarged, oriented, without metadata, sRGB.
 */
export async function renderRendition(
  _source: Buffer,
  _sourceFormat: RenderableSource,
  _params: RenditionParams,
  _output: OutputFormat,
  _limits: RenderLimits,
): Promise<RenderedImage> {
  throw errors.notImplemented('rendering');
}
