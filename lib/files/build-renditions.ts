// Builds the renditions service (renditions.ts) for the render function: the bucket and the `images`
// settings alone, so that function bundles nothing of the upload pipeline.
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { Renditions } from './renditions.ts';

export interface RenditionsInput {
  storage: FileStorage;
  images: AppConfig['images'];
}

export function buildRenditions({ storage, images }: RenditionsInput): Renditions {
  return new Renditions({
    storage,
    limits: { widths: images.widths, qualities: images.qualities },
    render: {
      maxInputPixels: images.max_input_pixels,
      maxFrames: images.max_frames,
      timeoutSeconds: images.render_timeout_seconds,
    },
  });
}
