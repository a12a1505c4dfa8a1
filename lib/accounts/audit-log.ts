// The audit log of administrators' actions (docs/ACCOUNTS.md "Audit log"): who did what to what, when and from
// where, and how it ended, kept `audit.retention_days`. One item per event, listed newest first from the
// `audit#<n>` shards of the `listing` index (n from the event's id), so no partition takes every event.
// Every administrator route writes its event before it acts (lib/http/admin-audit.ts) and its outcome after.
import { randomUUID } from 'node:crypto';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import { epochSeconds, type Item, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export interface AuditEvent {
  id: string;
  /** The administrator's account id. */
  actor_id: string;
  /** What was done, e.g. `moderation.approve`. */
  action: string;
  /** What it was done to, e.g. `file:<id>`. */
  target: string;
  /** The address the request came from. */
  from: string;
  /** Anything else worth keeping (never a secret). */
  details: Record<string, unknown>;
  /** The answer's HTTP status; absent while the action runs (or when it never finished). */
  status?: number;
  at: string;
}

/** What a page of the log may be narrowed to: each an exact match, `action` also a prefix (`bans.`). */
export interface AuditFilter {
  actor_id?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
}

export interface AuditLogDeps {
  table: Table;
  /** `listing_shards`. */
  shards: number;
  /** `audit.retention_days`. */
  retentionDays: number;
}

const auditKey = (id: string) => ({ pk: `audit#${id}`, sk: 'audit' });

export class AuditLog {
  private readonly listing: ShardedListing;

  constructor(private readonly deps: AuditLogDeps) {
    this.listing = { index: 'listing', name: 'audit', count: deps.shards };
  }

  async record(event: Omit<AuditEvent, 'id' | 'at'>): Promise<AuditEvent> {
    const now = this.deps.table.clock();
    const id = randomUUID();
    const stored: AuditEvent = { id, ...event, at: isoWithOffset(now) };
    await this.deps.table.put({
      ...auditKey(id),
      ...stored,
      gsi2pk: shardPartition(this.listing, id),
      gsi2sk: `${now.toISOString()}#${id}`,
      expires_at: epochSeconds(now) + this.deps.retentionDays * 86_400,
    });
    return stored;
  }

  /** The outcome of an event recorded before its action ran, with what the action adds to its details. */
  async finish(id: string, outcome: { status: number; target?: string; details?: Record<string, unknown> }) {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':status': outcome.status };
    const sets = ['#status = :status'];
    if (outcome.target !== undefined) {
      names['#target'] = 'target';
      values[':target'] = outcome.target;
      sets.push('#target = :target');
    }
    Object.entries(outcome.details ?? {}).forEach(([name, value], n) => {
      names['#details'] = 'details';
      names[`#d${n}`] = name;
      values[`:d${n}`] = value;
      sets.push(`#details.#d${n} = :d${n}`);
    });
    await this.deps.table.update(auditKey(id), {
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  /**
   * Newest first; the index holds only keys of these, so the page's events are read in one batch. A filter
   * narrows each page after it is read: a page may hold fewer than `limit` events and still have a cursor.
   */
  async list(
    options: { limit: number; cursor?: string | undefined },
    filter: AuditFilter = {},
  ): Promise<Page<AuditEvent>> {
    const page = await readShards(this.deps.table, this.listing, { ...options, order: 'newest-first' });
    const items = await this.deps.table.getMany(page.items.map((item) => auditKey(idOf(item))));
    return {
      items: items.flatMap((item) => (item ? [viewOf(item)] : [])).filter((event) => matches(event, filter)),
      next_cursor: page.next_cursor,
    };
  }
}

const idOf = (item: Item) => String(item.pk).slice('audit#'.length);

function matches(event: AuditEvent, filter: AuditFilter): boolean {
  if (filter.actor_id && event.actor_id !== filter.actor_id) return false;
  if (filter.target && event.target !== filter.target) return false;
  if (!filter.action) return true;
  return filter.action.endsWith('.')
    ? event.action.startsWith(filter.action)
    : event.action === filter.action;
}

function viewOf(item: Item): AuditEvent {
  return {
    id: String(item.id),
    actor_id: String(item.actor_id),
    action: String(item.action),
    target: String(item.target),
    from: String(item.from),
    details: (item.details as Record<string, unknown> | undefined) ?? {},
    ...(typeof item.status === 'number' ? { status: item.status } : {}),
    at: String(item.at),
  };
}
