// Files stored before moderation (docs/MODERATION.md "Files stored before moderation"): the worker's stream
// mapping starts at the stream's newest record, so files already stored are never classified by it. The
// backfill walks every file record without `moderation` (one strongly consistent scan: for a script, never
// the service) and classifies each as the worker does. Idempotent: a file classified meanwhile, by the
// worker or an earlier run, is left as it is (the classification's own rule).
import { FILE_KEY_PREFIX } from '#lib/platform/db/keys.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { ClassificationService, ClassifyOutcome } from './classification.ts';

export interface BackfillReport {
  /** Files found without a moderation. */
  files: number;
  /** What each came to. */
  outcomes: Partial<Record<ClassifyOutcome, number>>;
  /** Files the classification failed on (each left in its stated state, flagged or held). */
  failed: number;
}

export async function backfillModeration(
  table: Table,
  classification: Pick<ClassificationService, 'classify'>,
): Promise<BackfillReport> {
  const report: BackfillReport = { files: 0, outcomes: {}, failed: 0 };
  const unclassified = table.scan<{ id: string }>({
    FilterExpression: 'begins_with(pk, :file) AND sk = :sk AND attribute_not_exists(moderation)',
    ExpressionAttributeValues: { ':file': FILE_KEY_PREFIX, ':sk': 'file' },
    ProjectionExpression: 'id',
  });
  for await (const page of unclassified) {
    for (const { id } of page) {
      report.files += 1;
      try {
        const outcome = await classification.classify(id);
        report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
      } catch {
        report.failed += 1;
      }
    }
  }
  return report;
}
