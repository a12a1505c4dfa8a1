// An owner's rules at the edge (docs/IMAGES.md "Serving rules"): whether their files are served at all
// (stopped while over the month's bandwidth, docs/UPLOADS.md "Bandwidth") and which sites may show them
// (the Referer allow-list: hotlink protection). The table holds them: the truth, and what the local server
// reads as its edge. A change marks the item pending in the `edgerules#<n>` listing; the takedowns worker,
// each minute, copies what is pending into the edge's KeyValueStore under `o:<tag>` (the owner's tag in
// every key stored since tags, lib/files/names.ts), which the /i/* viewer-request function reads
// (infra/edge.ts): a change reaches every edge within two minutes, and no request looks anything up but the
// store. The decision itself (edgeRefusal) is one function, embedded in the edge's code and called by the
// local server, so both refuse alike.
import type { EdgeDenyList } from '#lib/platform/cdn/deny-list.ts';
import { type ShardedListing, shardPages, shardPartition } from '#lib/platform/db/shards.ts';
import type { Item, Table, TransactItem } from '#lib/platform/db/table.ts';
import { ownerTagOf } from './names.ts';

/** A Referer allow-list: hosts (`example.com`; `*.example.com` is its subdomains) and whether none passes. */
export interface RefererRules {
  hosts: string[];
  allow_empty: boolean;
}

/** An owner's rules as recorded: why serving stopped (absent: served), and the allow-list (absent: any). */
export interface OwnerRules {
  stopped?: string;
  referers?: RefererRules;
  /** The plan of the owner's grant and when it ends (epoch ms; absent: never): its watermark applies. */
  plan?: { id: string; until?: number };
  /** On a plan's entry (planTagOf): the version of its watermark. */
  mark?: string;
}

/** What the edge reads (`o:<tag>`, compact): `s` why serving stopped, `h` the allowed hosts, `e` empty passes. */
export interface EdgeRules {
  s?: string;
  h?: string[];
  e?: boolean;
  /** The owner's plan (`p`) until `u` (epoch ms): its originals and renditions go through the renderer. */
  p?: string;
  u?: number;
  /** On a plan's entry: its watermark's version, which the edge adds to the cache key as `wm`. */
  w?: string;
}

/** The entry of a plan's watermark among the owners' (`o:plan.<id>`): owner tags are hex, never this. */
export const planTagOf = (planId: string): string => `plan.${planId}`;

export type EdgeRefusal = 'stopped' | 'referer';

/** The short page of a 403 at the edge. */
export const REFUSAL_MESSAGES: Readonly<Record<EdgeRefusal, string>> = {
  stopped: "This file is not served for now: its owner's bandwidth for this month is used up.",
  referer: "This file's owner does not allow it to be shown on this site.",
};

/** The KeyValueStore key of an owner's rules. */
export const edgeRulesEntry = (tag: string): string => `o:${tag}`;

/**
 * The host a Referer names (lower case, no port): null when there is none, '' when it names no http(s) host
 * (it then matches no allow-list). Self-contained: embedded in the edge's code (infra/edge.ts).
 */
export function refererHostOf(referer: string | undefined): string | null {
  if (referer === undefined || referer === '') return null;
  const match = /^https?:\/\/(?:[^/?#@]*@)?([^/?#:]+)/i.exec(referer);
  return match === null ? '' : String(match[1]).toLowerCase();
}

/**
 * Why the edge refuses a file of an owner with these rules, under the deployment's allow-list, to a viewer
 * whose Referer names `host` (refererHostOf) at a service answering as `ownHost`; undefined: served. The
 * service's own pages always pass; every allow-list that applies must pass. Self-contained, as above.
 */
export function edgeRefusal(
  owner: EdgeRules | undefined,
  deployment: EdgeRules | undefined,
  host: string | null,
  ownHost: string,
): EdgeRefusal | undefined {
  // Written for CloudFront's runtime (ES 5.1 with let, const and arrows): no optional chaining, no for-of.
  // biome-ignore lint/complexity/useOptionalChain: CloudFront's runtime has no optional chaining.
  if (owner && owner.s) return 'stopped';
  if (host !== null && host === ownHost) return undefined;
  const lists = [owner, deployment];
  for (let i = 0; i < lists.length; i++) {
    const rules = lists[i];
    // biome-ignore lint/complexity/useOptionalChain: CloudFront's runtime has no optional chaining.
    if (!rules || !rules.h) continue;
    if (host === null) {
      if (!rules.e) return 'referer';
      continue;
    }
    const allowed = rules.h.some(
      (pattern) =>
        pattern === host ||
        (pattern.indexOf('*.') === 0 && host.slice(host.length - pattern.length + 1) === pattern.slice(1)),
    );
    if (!allowed) return 'referer';
  }
  return undefined;
}

/** The compact form of rules the edge reads; undefined when there is nothing to apply. */
export function edgeRulesOf(rules: OwnerRules): EdgeRules | undefined {
  const edge: EdgeRules = {
    ...(rules.stopped ? { s: rules.stopped } : {}),
    ...(rules.referers ? { h: rules.referers.hosts, e: rules.referers.allow_empty } : {}),
    ...(rules.plan ? { p: rules.plan.id, ...(rules.plan.until ? { u: rules.plan.until } : {}) } : {}),
    ...(rules.mark ? { w: rules.mark } : {}),
  };
  return Object.keys(edge).length > 0 ? edge : undefined;
}

/** The partition prefix of owners' rules' items (the render function reads them: infra/service-function.ts). */
export const OWNER_RULES_PREFIX = 'edgerules#';
const KEY_PREFIX = OWNER_RULES_PREFIX;
const rulesKey = (tag: string) => ({ pk: `${KEY_PREFIX}${tag}`, sk: 'rules' });

/** The partition name of rules changed since the edge last had them, in the `listing` index. */
export const PENDING_RULES_LISTING_NAME = 'edgerules';

function ownerRulesOfItem(item: Item | undefined): OwnerRules {
  if (item === undefined) return {};
  return {
    ...(typeof item.stopped === 'string' ? { stopped: item.stopped } : {}),
    ...(Array.isArray(item.hosts)
      ? { referers: { hosts: item.hosts as string[], allow_empty: item.allow_empty === true } }
      : {}),
    ...(typeof item.plan === 'string'
      ? {
          plan: { id: item.plan, ...(typeof item.plan_until === 'number' ? { until: item.plan_until } : {}) },
        }
      : {}),
  };
}

/** The plan whose watermark applies to the owner of these rules at `now`, if any. Self-contained (infra/edge.ts). */
export function planInForce(rules: EdgeRules | undefined, now: number): string | undefined {
  // biome-ignore lint/complexity/useOptionalChain: CloudFront's runtime has no optional chaining.
  if (!rules || !rules.p || (rules.u !== undefined && rules.u <= now)) return undefined;
  return rules.p;
}

/**
 * The write linking an owner to the plan of their grant (null: none), beside the grant's own write in its
 * transaction (settlement, a full refund), marked pending for the edge like any change of the rules.
 */
export function planLinkItem(
  ownerId: string,
  grant: { plan_id: string; ends_ms?: number } | null,
  now: Date,
  shards: number,
): TransactItem {
  const tag = ownerTagOf(ownerId);
  const until = grant?.ends_ms;
  return {
    Update: {
      Key: rulesKey(tag),
      UpdateExpression:
        'SET owner_id = :owner, gsi2pk = :pending, gsi2sk = :changed' +
        (grant ? `, #plan = :plan${until ? ', plan_until = :until' : ''}` : '') +
        (!grant ? ' REMOVE #plan, plan_until' : until ? '' : ' REMOVE plan_until'),
      ExpressionAttributeNames: { '#plan': 'plan' },
      ExpressionAttributeValues: {
        ':owner': ownerId,
        ':pending': shardPartition({ name: PENDING_RULES_LISTING_NAME, count: shards }, tag),
        ':changed': `${now.toISOString()}#${crypto.randomUUID()}`,
        ...(grant ? { ':plan': grant.plan_id } : {}),
        ...(until ? { ':until': until } : {}),
      },
    },
  };
}

/** The rules the local server applies for a tag: the table's, at once (the edge has them within minutes). */
export async function edgeRulesAt(table: Table, tag: string): Promise<EdgeRules | undefined> {
  return edgeRulesOf(ownerRulesOfItem(await table.get(rulesKey(tag), { consistent: false })));
}

export interface OwnerRulesDeps {
  table: Table;
  /** `listing_shards`: writers and the worker must agree. */
  shards: number;
}

/** Rules copied to the edge per page of a shard. */
const PAGE = 50;

export class OwnerRulesDesk {
  private readonly pending: ShardedListing;

  constructor(private readonly deps: OwnerRulesDeps) {
    this.pending = { index: 'listing', name: PENDING_RULES_LISTING_NAME, count: deps.shards };
  }

  async read(ownerId: string): Promise<OwnerRules> {
    return ownerRulesOfItem(await this.deps.table.get(rulesKey(ownerTagOf(ownerId))));
  }

  /** Stops serving the owner's files (`reason`), or serves them again (undefined). */
  setStopped(ownerId: string, reason: string | undefined): Promise<void> {
    return reason === undefined
      ? this.change(ownerId, {}, ['stopped'])
      : this.change(ownerId, { stopped: reason }, []);
  }

  /** Sets the owner's Referer allow-list, or takes it away (undefined: any site may show their files). */
  setReferers(ownerId: string, rules: RefererRules | undefined): Promise<void> {
    return rules === undefined
      ? this.change(ownerId, {}, ['hosts', 'allow_empty'])
      : this.change(ownerId, { hosts: rules.hosts, allow_empty: rules.allow_empty }, []);
  }

  /** A plan's watermark version at the edge (undefined: the plan marks nothing), under planTagOf. */
  setPlanMark(planId: string, version: string | undefined): Promise<void> {
    const tag = planTagOf(planId);
    return version === undefined
      ? this.changeAt(tag, {}, ['mark'])
      : this.changeAt(tag, { mark: version }, []);
  }

  private change(ownerId: string, set: Record<string, unknown>, remove: string[]): Promise<void> {
    return this.changeAt(ownerTagOf(ownerId), { owner_id: ownerId, ...set }, remove);
  }

  /** One update: the attributes, and the item marked pending (its change time) for the worker. */
  private async changeAt(tag: string, set: Record<string, unknown>, remove: string[]): Promise<void> {
    const values = { ...set, gsi2pk: shardPartition(this.pending, tag) };
    const names = Object.keys(values);
    await this.deps.table.update(rulesKey(tag), {
      UpdateExpression:
        `SET ${[...names, 'gsi2sk'].map((name) => `#${name} = :${name}`).join(', ')}` +
        (remove.length > 0 ? ` REMOVE ${remove.map((name) => `#${name}`).join(', ')}` : ''),
      ExpressionAttributeNames: Object.fromEntries(
        [...names, 'gsi2sk', ...remove].map((name) => [`#${name}`, name]),
      ),
      ExpressionAttributeValues: {
        ...Object.fromEntries(Object.entries(values).map(([name, value]) => [`:${name}`, value])),
        // Unique per change, so the worker clears the mark only if nothing changed since it read it.
        ':gsi2sk': `${this.deps.table.clock().toISOString()}#${crypto.randomUUID()}`,
      },
    });
  }

  /**
   * The worker's part: every pending change written to the edge (each shard its own loop, all at once),
   * then its mark cleared unless it changed meanwhile (then the next run writes it again). Answers how many.
   */
  async sync(edge: EdgeDenyList): Promise<number> {
    const { table } = this.deps;
    let count = 0;
    const readShard = async (shard: number) => {
      for await (const page of shardPages(table, this.pending, shard, { pageSize: PAGE })) {
        const items = (await table.getMany(page.map((marked) => rulesKey(tagOfItem(marked))))).filter(
          (item): item is Item => item?.gsi2sk !== undefined,
        );
        const rules = items.map((item) => ({
          tag: tagOfItem(item),
          edge: edgeRulesOf(ownerRulesOfItem(item)),
        }));
        const puts = rules.flatMap(({ tag, edge }) =>
          edge ? [[edgeRulesEntry(tag), JSON.stringify(edge)]] : [],
        );
        const removals = rules.flatMap(({ tag, edge }) => (edge ? [] : [edgeRulesEntry(tag)]));
        await edge.write(puts as Array<[string, string]>, removals);
        await Promise.all(items.map((item) => this.clearMark(item)));
        count += items.length;
      }
    };
    await Promise.all(Array.from({ length: this.deps.shards }, (_, shard) => readShard(shard)));
    return count;
  }

  private async clearMark(item: Item): Promise<void> {
    await this.deps.table
      .update(rulesKey(tagOfItem(item)), {
        UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
        ConditionExpression: 'gsi2sk = :seen',
        ExpressionAttributeValues: { ':seen': item.gsi2sk },
      })
      .catch((error: unknown) => {
        // Changed since it was read: still pending, written again next run.
        if ((error as { name?: string }).name !== 'ConditionFailedError') throw error;
      });
  }
}

const tagOfItem = (item: Item): string => String(item.pk).slice(KEY_PREFIX.length);
