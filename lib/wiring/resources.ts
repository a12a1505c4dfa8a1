// A group's resources, built on first use from its settings and reachable only through its needs: a group
// that did not declare the master key cannot open it, whatever its settings say (docs/CONTRIBUTING.md).
// Each resource's accessor lives in its own module (lib/wiring/<resource>.ts), so a bundle carries only
// the SDK clients its group reaches for.

import type { OrderEventPublisher } from '#lib/billing/order-events.ts';
import { AppError } from '#lib/core/errors.ts';
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import type { Invalidator } from '#lib/platform/cdn/invalidator.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import type { MasterKey } from '#lib/platform/crypto/index.ts';
import type { Clock, Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import type { GroupNeeds, Need } from './needs.ts';

/** A group reached for something its needs do not declare: a wiring bug, never the caller's fault. */
export class MissingNeedError extends AppError {
  constructor(group: string, need: Need) {
    super(
      'internal',
      `The ${group} function uses ${need}, which functions/${group}/needs.ts does not declare`,
      {
        expose: false,
      },
    );
    this.name = 'MissingNeedError';
  }
}

export interface GroupResources {
  readonly group: string;
  readonly needs: GroupNeeds;
  readonly settings: Readonly<AppConfig>;
  readonly clock: Clock | undefined;
  /** What has been built, once per container (by need, or by the slot of a need's second resource). */
  readonly built: Map<string, unknown>;
}

/**
 * Resources a caller already holds, by need, as the accessors of lib/wiring/<resource>.ts build them (tests:
 * an in-memory mailer, a recording CDN, the one master key of a test file). Still reachable only through
 * the group's needs: a provided resource the group does not declare throws as a built one would.
 */
export interface ProvidedResources {
  table?: Table;
  bucket?: FileStorage;
  masterKey?: () => Promise<MasterKey>;
  events?: OrderEventPublisher;
  mail?: Mailer;
  cdn?: Invalidator;
  /** The edge's deny-list (need `cdn`). */
  denyList?: EdgeDenyList;
}

export interface GroupResourcesOptions {
  clock?: Clock;
  provided?: ProvidedResources;
}

export function groupResources(
  group: string,
  needs: GroupNeeds,
  settings: Readonly<AppConfig>,
  options: GroupResourcesOptions = {},
): GroupResources {
  const provided = Object.entries(options.provided ?? {}).filter(([, resource]) => resource !== undefined);
  return { group, needs, settings, clock: options.clock, built: new Map(provided) };
}

/** The resource behind `need`, built once per container; a need the group did not declare throws. */
export function once<T>(resources: GroupResources, need: Need, build: () => T, slot: string = need): T {
  if (!resources.needs[need]) throw new MissingNeedError(resources.group, need);
  if (!resources.built.has(slot)) resources.built.set(slot, build());
  return resources.built.get(slot) as T;
}
