// The audit log of administrators' actions (docs/MODERATION.md "Audit"): who did what to what, when and from
// where, kept `audit.retention_days`. One item per event, listed newest first from the `audit#<n>` shards of
// the `listing` index (n from the event's id), so no partition takes every event.
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
  at: string;
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

  /** Newest first; the index holds only keys of these, so the page's events are read in one batch. */
  async list(options: { limit: number; cursor?: string | undefined }): Promise<Page<AuditEvent>> {
    const page = await readShards(this.deps.table, this.listing, { ...options, order: 'newest-first' });
    const items = await this.deps.table.getMany(page.items.map((item) => auditKey(idOf(item))));
    return {
      items: items.flatMap((item) => (item ? [viewOf(item)] : [])),
      next_cursor: page.next_cursor,
    };
  }
}

const idOf = (item: Item) => String(item.pk).slice('audit#'.length);

function viewOf(item: Item): AuditEvent {
  return {
    id: String(item.id),
    actor_id: String(item.actor_id),
    action: String(item.action),
    target: String(item.target),
    from: String(item.from),
    details: (item.details as Record<string, unknown> | undefined) ?? {},
    at: String(item.at),
  };
}
