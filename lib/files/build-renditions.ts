// Builds the renditions service (renditions.ts) for the render function: the bucket, the claims' table and
// the `images` settings alone, so that function bundles nothing of the upload pipeline.

import type { AppConfig } from '#lib/platform/config/schema.ts';
import { planKey } from '#lib/platform/db/keys.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { OwnerMarks } from './owner-marks.ts';
import { RenderProcesses, renderProcessScript } from './render-processes.ts';
import { presetsOf } from './rendition-access.ts';
import { RenditionClaims } from './rendition-claims.ts';
import { Renditions } from './renditions.ts';

/**
 * Idle render processes kept for the next renders: a Lambda container renders one at a time and so keeps
 * one; the local function serves a page of thumbnails at once.
 */
const IDLE_RENDER_PROCESSES = 4;

/** The render processes: one per render in flight, a few kept idle for the next. */
export function buildRenderer(images: AppConfig['images']): RenderProcesses {
  return new RenderProcesses({
    script: renderProcessScript(),
    timeoutSeconds: images.render_timeout_seconds,
    memoryMb: images.render_memory_mb,
    idleMax: IDLE_RENDER_PROCESSES,
  });
}

export interface RenditionsInput {
  storage: FileStorage;
  /** The table of the claims and the owners' marks, reached on the first render or look-up only. */
  table: () => Promise<Table>;
  images: AppConfig['images'];
  renderer: RenderProcesses;
  /** The secrets signed rendition queries are checked against. */
  signingSecrets: () => Promise<readonly string[]>;
  clock?: Clock;
}

export function buildRenditions(input: RenditionsInput): Renditions {
  const { storage, table, images, renderer, signingSecrets, clock = () => new Date() } = input;
  const limits = { widths: images.widths, qualities: images.qualities };
  let claims: Promise<RenditionClaims> | undefined;
  const marks = new OwnerMarks({ table, planKey, storage, clock });
  return new Renditions({
    storage,
    limits,
    presets: presetsOf(images.presets, limits),
    signingSecrets,
    render: {
      maxInputPixels: images.max_input_pixels,
      maxFrames: images.max_frames,
      avifMaxPixels: images.avif_max_pixels,
    },
    renderer,
    claims: () => {
      claims ??= table().then((claimsTable) => new RenditionClaims({ table: claimsTable }));
      return claims;
    },
    timeoutSeconds: images.render_timeout_seconds,
    failureSeconds: images.failure_cache_seconds,
    refreshAfterMs: (images.derived_ttl_days * 24 * 60 * 60 * 1000) / 2,
    clock,
    markOf: (key) => marks.of(key),
  });
}
