// Bulk actions over selected files: the per-file API called a few at a time, and one sentence of what came
// of it (how many went through, and each failure by the file's name and the API's words).
import { errorText } from './ui.tsx';

/** How many requests a bulk action keeps in flight at once. */
export const BULK_CONCURRENCY = 4;

export interface BulkOutcome<T = { original_name: string }> {
  done: number;
  failures: { file: T; reason: string }[];
}

/** Runs `work` on every file, at most `limit` at a time; never throws (failures are collected). */
export async function runBulk<T extends { original_name: string }>(
  files: T[],
  work: (file: T) => Promise<unknown>,
  limit = BULK_CONCURRENCY,
): Promise<BulkOutcome<T>> {
  const failures: BulkOutcome<T>['failures'] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      try {
        await work(file);
        done++;
      } catch (caught) {
        failures.push({ file, reason: errorText(caught) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, files.length) }, worker));
  return { done, failures };
}

/** "3 updated" and, when some failed, "Not done: a.png (reason); b.png (reason)". */
export function describeOutcome(
  outcome: BulkOutcome<{ original_name: string }>,
  verb: string,
): { message: string; error: string } {
  return {
    message: `${outcome.done} ${verb}`,
    error:
      outcome.failures.length === 0
        ? ''
        : `Not done: ${outcome.failures.map((failure) => `${failure.file.original_name} (${failure.reason})`).join('; ')}`,
  };
}
