// The moderation worker's part (docs/MODERATION.md "Classification"): a stored file's bytes classified,
// the policy applied, and in one transaction the record's `moderation`, its place in the queue, and for a
// held file its hold at the edge and its leaving the gallery (it waits in the private listing's shard of
// the same number, so the back office still lists it). A file an administrator reviewed is never touched
// again; one the classifier could not read is left in a stated state (flagged, or held under hold-all)
// and the worker is asked to try again.
import { buffer } from 'node:stream/consumers';
import { type FileItem, type FileRepository, fileKey, fileListing } from '#lib/files/files.ts';
import { renderableSourceOfKey } from '#lib/files/rendition-query.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import { ConditionFailedError, type Table, type TransactItem } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import type { Classifier } from './classifier.ts';
import type { EdgeHolds } from './edge-holds.ts';
import { decide, type Moderation, type PolicySettings, thresholdsFor, undecided } from './policy.ts';
import type { ModerationQueue } from './queue.ts';

/** What the record says when the classifier failed (never the failure's own text). */
export const CLASSIFIER_FAILED = 'the classifier could not read this file; it is tried again';
/** What the record says of a type the classifier cannot decode (BMP, ICO): a person looks at it. */
export const NOT_CLASSIFIABLE = 'the classifier cannot read this type of image';

/**
 * How the stream reaches the worker (the stack's mapping and the local reader): a few files a batch, each
 * about a second of CPU, and a few retries before a file is left in its stated state.
 */
export const MODERATION_BATCH = { batchSize: 5, retryAttempts: 5 } as const;

export interface ClassificationDeps {
  table: Table;
  files: Pick<FileRepository, 'getItem' | 'listingShards'>;
  storage: Pick<FileStorage, 'open'>;
  /** Loaded on the first file (the model takes a second or so). */
  classifier: () => Promise<Classifier>;
  policy: PolicySettings;
  /** The plan the owner holds now, when any plan has thresholds of its own. */
  planOf: (ownerId: string) => Promise<string | undefined>;
  holds: EdgeHolds;
  queue: ModerationQueue;
}

/** What one file came to: its state, or why nothing was done. */
export type ClassifyOutcome = Moderation['state'] | 'gone' | 'reviewed' | 'classified';

/** The bytes are not stored yet (the record is written first): the stream delivers the file again. */
export class NotStoredYetError extends Error {
  constructor(fileId: string) {
    super(`the bytes of file ${fileId} are not stored yet`);
    this.name = 'NotStoredYetError';
  }
}

export class ClassificationService {
  constructor(private readonly deps: ClassificationDeps) {}

  /**
   * Classifies one stored file; throws when it should be tried again (bytes not there yet, the classifier
   * failed: the record then already says so).
   */
  async classify(fileId: string): Promise<ClassifyOutcome> {
    const item = await this.deps.files.getItem(fileId);
    if (!item) return 'gone';
    const current = item.moderation as Moderation | undefined;
    if (current?.reviewed) return 'reviewed';
    if (current && current.error === undefined) return 'classified';
    const thresholds = thresholdsFor(
      this.deps.policy,
      Object.keys(this.deps.policy.plans).length > 0 ? await this.deps.planOf(item.owner_id) : undefined,
    );
    let moderation: Moderation;
    let failure: unknown;
    if (renderableSourceOfKey(item.key) === undefined) {
      moderation = { state: undecided(thresholds), labels: [], score: null, error: NOT_CLASSIFIABLE };
    } else {
      const stored = await this.deps.storage.open(item.key);
      if (!stored) throw new NotStoredYetError(fileId);
      const bytes = await buffer(stored.body);
      try {
        const { labels, score } = await (await this.deps.classifier()).classify(bytes);
        moderation = { state: decide(score, thresholds), labels, score };
      } catch (error) {
        failure = error;
        moderation = { state: undecided(thresholds), labels: [], score: null, error: CLASSIFIER_FAILED };
      }
    }
    const written = await this.write(item, moderation);
    // A retry that publishes what a failure had queued: out of the queue again, unless it was reported.
    if (written === 'published' && current?.error !== undefined)
      await this.deps.queue.forgetUnreported(item.id);
    if (failure !== undefined) {
      log.warn('the classifier failed on a stored file; it is tried again', {
        file_id: fileId,
        error_name: (failure as { name?: string } | undefined)?.name,
      });
      throw failure;
    }
    return written;
  }

  /** The record's moderation, the queue, and the edge's hold, together; a review meanwhile wins. */
  private async write(item: FileItem, moderation: Moderation): Promise<ClassifyOutcome> {
    const held = moderation.state === 'held';
    const writes: TransactItem[] = [
      {
        Update: {
          Key: fileKey(item.id),
          UpdateExpression: `SET moderation = :moderation${held ? ', gsi2pk = :unlisted' : ''}`,
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(moderation.reviewed)',
          ExpressionAttributeValues: {
            ':moderation': moderation,
            ...(held
              ? {
                  ':unlisted': shardPartition(fileListing('private', this.deps.files.listingShards), item.id),
                }
              : {}),
          },
        },
      },
      ...(moderation.state === 'published' ? [] : [this.deps.queue.enqueue(item)]),
      ...(held ? [this.deps.holds.change(item.key, true)] : []),
    ];
    try {
      await this.deps.table.transact(writes);
      return moderation.state;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      // Deleted or reviewed since it was read.
      return (await this.deps.files.getItem(item.id)) ? 'reviewed' : 'gone';
    }
  }
}
