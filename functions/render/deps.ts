// The render function's dependencies, built once per container from its needs and settings.

import { Renditions } from '#lib/files/renditions.ts';
import { config } from '#lib/platform/config/index.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { needs } from './needs.ts';

export interface RenderDeps {
  storage: FileStorage;
  renditions: Renditions;
}

export function buildRenderDeps(resources: GroupResources): RenderDeps {
  const storage = storageOf(resources);
  const { images } = resources.settings;
  return {
    storage,
    renditions: new Renditions({
      storage,
      limits: { widths: images.widths, qualities: images.qualities },
      render: {
        maxInputPixels: images.max_input_pixels,
        maxFrames: images.max_frames,
        timeoutSeconds: images.render_timeout_seconds,
      },
    }),
  };
}

let deps: RenderDeps | undefined;

export function renderDeps(): RenderDeps {
  deps ??= buildRenderDeps(groupResources('render', needs, config));
  return deps;
}
