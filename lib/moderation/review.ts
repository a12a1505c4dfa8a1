// An administrator's review of a queued file (docs/MODERATION.md "The queue"): approve (published for good,
// its hold at the edge released, back in the gallery if public), take down (the image's perceptual hash on
// the block list, then the back office's delete, which takes it out of the CDN), or take down and disable
// the uploader. Each is one audit event.
import { buffer } from 'node:stream/consumers';
import type { AuditLog } from '#lib/accounts/audit-log.ts';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { errors } from '#lib/core/errors.ts';
import type { FileDeletionService } from '#lib/files/file-deletion.ts';
import { type FileItem, type FileRepository, fileKey, fileListing } from '#lib/files/files.ts';
import { trashKey } from '#lib/files/prefixes.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import { ConditionFailedError, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import type { EdgeHolds } from './edge-holds.ts';
import type { Moderation } from './policy.ts';
import type { ModerationQueue } from './queue.ts';

export const REVIEW_ACTIONS = ['approve', 'take_down', 'take_down_and_disable'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export interface Reviewer {
  id: string;
  /** The address the review came from (the audit log's `from`). */
  from: string;
}

export interface ReviewResult {
  id: string;
  action: ReviewAction;
  /** approve: the file's moderation now; a takedown: null (the file is gone). */
  moderation: Moderation | null;
  /** A takedown: whether the image's likeness is now refused at upload (too plain an image is not). */
  blocked: boolean;
  /** take_down_and_disable: whether the uploader's account was disabled (never an administrator's). */
  owner_disabled: boolean;
}

/** The block list and the hash as reviews use them (lib/moderation/block-list.ts, perceptual-hash.ts). */
export interface Likeness {
  hashOf(bytes: Buffer): Promise<{ hash: string; informative: boolean }>;
  block(entry: { hash: string; file_id: string; owner_id: string; created_by: string }): Promise<unknown>;
}

export interface ReviewDeps {
  table: Table;
  files: Pick<FileRepository, 'getStored' | 'listingShards' | 'record'>;
  storage: Pick<FileStorage, 'open'>;
  deletions: Pick<FileDeletionService, 'delete'>;
  accounts: Pick<AccountRepository, 'get' | 'setStatus'>;
  queue: ModerationQueue;
  holds: EdgeHolds;
  likeness: Likeness;
  audit: AuditLog;
}

export class ReviewService {
  constructor(private readonly deps: ReviewDeps) {}

  async review(reviewer: Reviewer, fileId: string, action: ReviewAction): Promise<ReviewResult> {
    // In its owner's trash too: the owner could restore it, so it is reviewed (a trashed file's approval
    // leaves it out of the listings, as the trash does).
    const file = await this.deps.files.getStored(fileId);
    if (!file) throw errors.notFound('file: not found');
    const result =
      action === 'approve' ? await this.approve(file) : await this.takeDown(reviewer, file, action);
    await this.deps.audit.record({
      actor_id: reviewer.id,
      action: `moderation.${action}`,
      target: `file:${file.id}`,
      from: reviewer.from,
      details: {
        owner_id: file.owner_id,
        key: file.key,
        blocked: result.blocked,
        owner_disabled: result.owner_disabled,
      },
      status: 200,
    });
    return result;
  }

  /** Published for good; out of the queue; back where its permission lists it; released at the edge. */
  private async approve(file: FileItem): Promise<ReviewResult> {
    const before = file.moderation as Moderation | undefined;
    const moderation: Moderation = {
      state: 'published',
      labels: before?.labels ?? [],
      score: before?.score ?? null,
      reviewed: true,
    };
    const trashed = file.trashed_at !== undefined;
    await this.deps.table
      .transact([
        {
          Update: {
            Key: fileKey(file.id),
            UpdateExpression: `SET moderation = :moderation${trashed ? '' : ', gsi2pk = :listed'}`,
            ConditionExpression: `attribute_exists(pk)${trashed ? '' : ' AND attribute_not_exists(trashed_at)'}`,
            ExpressionAttributeValues: {
              ':moderation': moderation,
              ...(trashed
                ? {}
                : {
                    ':listed': shardPartition(
                      fileListing(file.permission, this.deps.files.listingShards),
                      file.id,
                    ),
                  }),
            },
          },
        },
        this.deps.queue.dequeue(file.id),
        ...(before?.state === 'held' ? [this.deps.holds.change(file.key, false)] : []),
      ])
      .catch((error: unknown) => {
        throw error instanceof ConditionFailedError ? errors.notFound('file: not found') : error;
      });
    return { id: file.id, action: 'approve', moderation, blocked: false, owner_disabled: false };
  }

  private async takeDown(reviewer: Reviewer, file: FileItem, action: ReviewAction): Promise<ReviewResult> {
    const blocked = await this.blockQuietly(reviewer, file);
    await this.deps.deletions.delete(null, file.id);
    // Its hold at the edge is released only once the deny-list has it (the delete recorded the takedown).
    await this.deps.table.transact([
      this.deps.queue.dequeue(file.id),
      ...((file.moderation as Moderation | undefined)?.state === 'held'
        ? [this.deps.holds.change(file.key, false)]
        : []),
    ]);
    const owner_disabled = action === 'take_down_and_disable' && (await this.disableOwner(file.owner_id));
    return { id: file.id, action, moderation: null, blocked, owner_disabled };
  }

  /**
   * The image's likeness on the block list, before its bytes go. An image too plain to tell apart, or one
   * that cannot be decoded, is taken down without (logged): the takedown itself must not fail on it.
   */
  private async blockQuietly(reviewer: Reviewer, file: FileItem): Promise<boolean> {
    try {
      // A file in the trash keeps its bytes under trash/ (lib/files/trash.ts).
      const stored = await this.deps.storage.open(file.trashed_at ? trashKey(file.key) : file.key);
      if (!stored) return false;
      const { hash, informative } = await this.deps.likeness.hashOf(await buffer(stored.body));
      if (!informative) return false;
      await this.deps.likeness.block({
        hash,
        file_id: file.id,
        owner_id: file.owner_id,
        created_by: reviewer.id,
      });
      return true;
    } catch (error) {
      log.warn('could not put a taken-down image on the block list', {
        file_id: file.id,
        error_name: (error as { name?: string } | undefined)?.name,
      });
      return false;
    }
  }

  /** An ordinary account is disabled (its sessions and tokens refused at once); an administrator is not. */
  private async disableOwner(ownerId: string): Promise<boolean> {
    const owner = await this.deps.accounts.get(ownerId);
    if (!owner || owner.role === 'admin' || owner.status === 'disabled') return false;
    return (await this.deps.accounts.setStatus(ownerId, 'disabled')) !== undefined;
  }
}
