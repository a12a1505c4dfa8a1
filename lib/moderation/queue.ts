// The moderation queue (docs/MODERATION.md "The queue"): one item per file waiting for a person (held or
// flagged by the classifier, or reported), listed oldest first from the `moderation#<n>` shards of the
// `listing` index, n from the file's id, so no partition takes every classification. A file's reports are
// their own items under `reports#<file id>`, newest first; the queue item counts them.
import { randomUUID } from 'node:crypto';
import type { FileItem, FileRepository } from '#lib/files/files.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import { conditionFailedReturns, type Item, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export const queueKey = (fileId: string) => ({ pk: `modqueue#${fileId}`, sk: 'queue' });
export const QUEUE_LISTING_NAME = 'moderation';
/** Reports shown with each queued file (the newest; the count says how many there are). */
const REPORTS_SHOWN = 10;

export const REPORT_REASONS = [
  'sexual',
  'violence',
  'hate',
  'illegal',
  'copyright',
  'spam',
  'other',
] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];

export interface ReportView {
  reason: ReportReason;
  note: string | null;
  created_at: string;
}

/** A queued file as the console shows it: why it is there, its record with its owner, its reports. */
export interface QueueEntry {
  file: UploadRecord & { owner_id: string };
  queued_at: string;
  report_count: number;
  reports: ReportView[];
}

export interface ModerationQueueDeps {
  table: Table;
  files: Pick<FileRepository, 'records'>;
  /** `listing_shards`. */
  shards: number;
}

export class ModerationQueue {
  private readonly listing: ShardedListing;

  constructor(private readonly deps: ModerationQueueDeps) {
    this.listing = { index: 'listing', name: QUEUE_LISTING_NAME, count: deps.shards };
  }

  /** The write that puts a file in the queue (kept at its first time there), counting `reports` more. */
  enqueue(file: Pick<FileItem, 'id' | 'owner_id'>, reports = 0): TransactItem {
    const now = this.deps.table.clock();
    return {
      Update: {
        Key: queueKey(file.id),
        UpdateExpression:
          'SET file_id = :id, owner_id = :owner, gsi2pk = :partition, gsi2sk = if_not_exists(gsi2sk, :sort), ' +
          'queued_at = if_not_exists(queued_at, :at) ADD report_count :reports',
        ExpressionAttributeValues: {
          ':id': file.id,
          ':owner': file.owner_id,
          ':partition': shardPartition(this.listing, file.id),
          ':sort': `${now.toISOString()}#${file.id}`,
          ':at': isoWithOffset(now),
          ':reports': reports,
        },
      },
    };
  }

  /** The write that takes a file out of the queue. */
  dequeue(fileId: string): TransactItem {
    return { Delete: { Key: queueKey(fileId) } };
  }

  /** Takes a file out of the queue unless someone reported it (a retry's classification published it). */
  async forgetUnreported(fileId: string): Promise<void> {
    await this.deps.table
      .delete(queueKey(fileId), {
        ConditionExpression: 'attribute_not_exists(report_count) OR report_count = :none',
        ExpressionAttributeValues: { ':none': 0 },
      })
      .catch(conditionFailedReturns(undefined));
  }

  /** A report's own item (kept with the file's queue history until the file is reviewed). */
  report(fileId: string, reason: ReportReason, note: string | undefined): TransactItem {
    const now = this.deps.table.clock();
    return {
      Put: {
        Item: {
          pk: `reports#${fileId}`,
          sk: `${now.toISOString()}#${randomUUID()}`,
          reason,
          ...(note ? { note } : {}),
          created_at: isoWithOffset(now),
        },
      },
    };
  }

  /** Queued files, oldest first; a file deleted meanwhile is left out (and its queue item removed). */
  async list(options: { limit: number; cursor?: string | undefined }): Promise<Page<QueueEntry>> {
    const { table } = this.deps;
    const page = await readShards(table, this.listing, { ...options, order: 'oldest-first' });
    const ids = page.items.map((item) => String(item.pk).slice('modqueue#'.length));
    const [queued, files] = await Promise.all([
      table.getMany(ids.map(queueKey)),
      table.getMany<FileItem>(ids.map((id) => ({ pk: `file#${id}`, sk: 'file' }))),
    ]);
    const live = ids.flatMap((id, index) => {
      const file = files[index];
      const entry = queued[index];
      return file && entry ? [{ id, file, entry }] : [];
    });
    const gone = ids.filter((_id, index) => !files[index] && queued[index]);
    const [records, reports] = await Promise.all([
      this.deps.files.records(live.map(({ file }) => file)),
      Promise.all(live.map(({ id }) => this.reportsOf(id))),
      Promise.all(gone.map((id) => table.delete(queueKey(id)))),
    ]);
    return {
      items: live.map(({ file, entry }, index) => ({
        file: { ...records[index]!, owner_id: file.owner_id },
        queued_at: String(entry.queued_at),
        report_count: Number(entry.report_count ?? 0),
        reports: reports[index]!,
      })),
      next_cursor: page.next_cursor,
    };
  }

  /** Whether the file is queued now (read strongly). */
  async isQueued(fileId: string): Promise<boolean> {
    return (await this.deps.table.get(queueKey(fileId))) !== undefined;
  }

  private async reportsOf(fileId: string): Promise<ReportView[]> {
    const { items } = await this.deps.table.query<Item>({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `reports#${fileId}` },
      ScanIndexForward: false,
      Limit: REPORTS_SHOWN,
    });
    return items.map((item) => ({
      reason: item.reason as ReportReason,
      note: typeof item.note === 'string' ? item.note : null,
      created_at: String(item.created_at),
    }));
  }
}
