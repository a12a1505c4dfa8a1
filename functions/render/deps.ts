// The render function's dependencies, built once per container from its needs and settings.

import { buildRenderer, buildRenditions } from '#lib/files/build-renditions.ts';
import type { RenderProcesses } from '#lib/files/render-processes.ts';
import type { Renditions } from '#lib/files/renditions.ts';
import { config } from '#lib/platform/config/index.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { renditionSecretsOf } from '#lib/wiring/front-door.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { needs } from './needs.ts';

export interface RenderDeps {
  storage: FileStorage;
  /** The render processes (lib/files/render-processes.ts). */
  renderer: RenderProcesses;
  renditions: Renditions;
}

export function buildRenderDeps(resources: GroupResources): RenderDeps {
  const storage = storageOf(resources);
  const { images } = resources.settings;
  const renderer = buildRenderer(images);
  // The table's client is loaded on the first render: a stored rendition's answer never needs it.
  const table = async () => (await import('#lib/wiring/rendition-claims.ts')).claimsTableOf(resources);
  return {
    storage,
    renderer,
    renditions: buildRenditions({
      storage,
      table,
      images,
      renderer,
      signingSecrets: renditionSecretsOf(resources),
    }),
  };
}

let deps: RenderDeps | undefined;

export function renderDeps(): RenderDeps {
  deps ??= buildRenderDeps(groupResources('render', needs, config));
  return deps;
}
