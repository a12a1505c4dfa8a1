// Builds the moderation domain (docs/MODERATION.md) from what it uses: the worker's classification, the
// files group's queue and reviews, the shares group's reports, the takedowns worker's holds at the edge.
// Production (functions/*/deps.ts) and tests call the same builders.
import { AuditLog } from '#lib/accounts/audit-log.ts';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { type RateLimit, Throttle } from '#lib/accounts/throttle.ts';
import { errors } from '#lib/core/errors.ts';
import type { LikenessCheck } from '#lib/files/direct-upload.ts';
import type { FileDeletionService } from '#lib/files/file-deletion.ts';
import type { FileRepository } from '#lib/files/files.ts';
import type { ShareGrants } from '#lib/files/share-grants.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { BlockList, type BlockListDeps, MAX_BLOCK_DISTANCE } from './block-list.ts';
import { ClassificationService } from './classification.ts';
import type { Classifier } from './classifier.ts';
import { EdgeHolds, type EdgeHoldsDeps } from './edge-holds.ts';
import { perceptualHash } from './perceptual-hash.ts';
import type { PolicySettings } from './policy.ts';
import { ModerationQueue } from './queue.ts';
import { Reports } from './reports.ts';
import { type Likeness, ReviewService } from './review.ts';

export function buildEdgeHolds(input: EdgeHoldsDeps): EdgeHolds {
  return new EdgeHolds(input);
}

interface Common {
  table: Table;
  files: FileRepository;
  /** `listing_shards`. */
  shards: number;
}

const queueOf = ({ table, files, shards }: Common) => new ModerationQueue({ table, files, shards });

/** The moderation worker's part. */
export function buildClassification(
  input: Common & {
    storage: FileStorage;
    classifier: () => Promise<Classifier>;
    policy: PolicySettings;
    planOf: (ownerId: string) => Promise<string | undefined>;
  },
): ClassificationService {
  const { table, files, storage, classifier, policy, planOf, shards } = input;
  const holds = buildEdgeHolds({ table, shards });
  return new ClassificationService({
    table,
    files,
    storage,
    classifier,
    policy,
    planOf,
    holds,
    queue: queueOf(input),
  });
}

/** The block list of taken-down images' likenesses (the files group: reviews add, uploads look up). */
export function buildBlockList(input: BlockListDeps): BlockList {
  return new BlockList(input);
}

/**
 * The uploads' check against the block list (docs/MODERATION.md "The block list"): a likeness within
 * `moderation.block_distance` of a taken-down image is 451. Bytes the hash cannot read (BMP, ICO), or too
 * plain to tell apart, pass: nothing of them could have been blocked.
 */
export function buildLikenessCheck(blockList: BlockList, distance: number): LikenessCheck {
  return {
    async of(bytes) {
      const likeness = await perceptualHash(bytes).catch(() => undefined);
      return likeness?.informative ? likeness.hash : undefined;
    },
    async refuse(likeness) {
      if (likeness === undefined) return;
      if (await blockList.nearest(likeness, Math.min(distance, MAX_BLOCK_DISTANCE)))
        throw errors.unavailableForLegalReasons(
          'file: is a likeness of an image the operator took down; it is not accepted',
        );
    },
  };
}

/** The back office's part: the queue, reviews, the block list and the audit log they write. */
export function buildReviews(
  input: Common & {
    storage: FileStorage;
    deletions: FileDeletionService;
    accounts: AccountRepository;
    blockList: BlockList;
    /** `audit.retention_days`. */
    auditRetentionDays: number;
  },
) {
  const { table, files, storage, deletions, accounts, blockList, shards } = input;
  const queue = queueOf(input);
  const audit = new AuditLog({ table, shards, retentionDays: input.auditRetentionDays });
  const holds = buildEdgeHolds({ table, shards });
  const likeness: Likeness = { hashOf: perceptualHash, block: (entry) => blockList.add(entry) };
  return {
    queue,
    audit,
    blockList,
    reviews: new ReviewService({ table, files, storage, deletions, accounts, queue, holds, likeness, audit }),
  };
}

/** Reports from anyone (the shares group: it reads share links). */
export function buildReports(input: Common & { grants: ShareGrants; rate: RateLimit }): Reports {
  const { table, files, grants, rate } = input;
  return new Reports({
    table,
    files,
    grants,
    queue: queueOf(input),
    throttle: new Throttle({ table }),
    rate,
  });
}
