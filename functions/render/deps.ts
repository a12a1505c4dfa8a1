// The render function's dependencies, built once per container from its needs and settings.

import { buildRenditions } from '#lib/files/build-renditions.ts';
import type { Renditions } from '#lib/files/renditions.ts';
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
  return { storage, renditions: buildRenditions({ storage, images: resources.settings.images }) };
}

let deps: RenderDeps | undefined;

export function renderDeps(): RenderDeps {
  deps ??= buildRenderDeps(groupResources('render', needs, config));
  return deps;
}
