// The files function's dependencies, built once per container from its needs and settings: the storage.

import type { FileStorage } from '#lib/files/storage.ts';
import { config } from '#lib/platform/config/index.ts';
import { type GroupResources, groupResources } from '#lib/wiring/resources.ts';
import { storageOf } from '#lib/wiring/storage.ts';
import { needs } from './needs.ts';

export interface FilesDeps {
  storage: FileStorage;
}

export function buildFilesDeps(resources: GroupResources): FilesDeps {
  return { storage: storageOf(resources) };
}

let deps: FilesDeps | undefined;

export function filesDeps(): FilesDeps {
  deps ??= buildFilesDeps(groupResources('files', needs, config));
  return deps;
}
