// Moving a deployed table from its first indexes (gsi1 and gsi2, every attribute projected) to the current
// ones (lib/platform/db/keys.ts), as CloudFormation allows: a stack update creates or deletes one index, a
// projection cannot change in place, and an index is not queried while it is built. The stage setting
// `infra.legacy_indexes` names the step (docs/DEPLOYMENT.md, "Moving to the sharded listings"): each step's
// table differs from the previous step's by one index, and the functions read an index only once an
// earlier deploy built it (till then the old index with the same key attributes answers).
import { type IndexName, projectionOf, TABLE } from '#lib/platform/db/keys.ts';
import { NOT_BUILT } from '#lib/platform/db/table.ts';

export interface TableIndex {
  name: string;
  partitionKey: string;
  sortKey: string;
  projection: { ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; NonKeyAttributes?: string[] };
}

/** The indexes of a table made before the listings were sharded: the same keys as owner and listing. */
export const LEGACY_INDEXES: readonly TableIndex[] = [
  { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: { ProjectionType: 'ALL' } },
  { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: { ProjectionType: 'ALL' } },
];

/** The older index that answers a current one's queries until it is built. */
const STAND_IN: Partial<Record<IndexName, string>> = { owner: 'gsi1', listing: 'gsi2', due: NOT_BUILT };

const CURRENT: readonly TableIndex[] = TABLE.indexes.map((index) => ({
  name: index.name,
  partitionKey: index.partitionKey,
  sortKey: index.sortKey,
  projection: projectionOf(index),
}));

/** The steps, in order: each current index added (one deploy each), then gsi1 dropped; then no setting. */
export const LEGACY_INDEX_STEPS = [
  ...CURRENT.map((index) => `adding-${index.name}`),
  'dropping-gsi1',
] as readonly string[] as readonly [string, ...string[]];

/** The table's indexes at a step of the move; without one, the current indexes only. */
export function tableIndexesAt(step?: string): TableIndex[] {
  if (step === undefined) return [...CURRENT];
  const position = LEGACY_INDEX_STEPS.indexOf(step);
  if (position < 0) throw new Error(`infra.legacy_indexes: no step ${step}`);
  const legacy = step === 'dropping-gsi1' ? LEGACY_INDEXES.slice(1) : [...LEGACY_INDEXES];
  return [...legacy, ...CURRENT.slice(0, position + 1)];
}

/**
 * The index each current index's queries read at a step (the functions' `table_indexes` setting): its
 * stand-in unless an earlier step built it. Only those differing from their own name are listed.
 */
export function queriedIndexesAt(step?: string): Partial<Record<IndexName, string>> {
  if (step === undefined) return {};
  tableIndexesAt(step);
  const previous = LEGACY_INDEX_STEPS[LEGACY_INDEX_STEPS.indexOf(step) - 1];
  const built = new Set(previous === undefined ? [] : tableIndexesAt(previous).map((index) => index.name));
  return Object.fromEntries(
    CURRENT.flatMap(({ name }) => {
      const standIn = STAND_IN[name as IndexName];
      return standIn && !built.has(name) ? [[name, standIn]] : [];
    }),
  );
}
