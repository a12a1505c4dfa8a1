// Bulk actions over selected files: the per-file API called a few at a time, and one sentence of what came
// of it (how many went through, and each failure by the file's name and the API's words). No imports, so
// the rule is tested without a browser (test/unit/web-bulk.test.ts).

/** How many requests a bulk action keeps in flight at once. */
export const BULK_CONCURRENCY = 4;

export interface BulkOutcome<T> {
  done: number;
  failures: { file: T; error: unknown }[];
}

/** Runs `work` on every file, at most `limit` at a time; never throws (failures are collected in order). */
export async function runBulk<T>(
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
      } catch (error) {
        failures.push({ file, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, files.length) }, worker));
  return { done, failures };
}

/** "3 updated" and, when some failed, "Not done: a.png (reason); b.png (reason)". */
export function describeOutcome<T extends { original_name: string }>(
  outcome: BulkOutcome<T>,
  verb: string,
  reasonOf: (error: unknown) => string,
): { message: string; error: string } {
  const failed = outcome.failures.map(({ file, error }) => `${file.original_name} (${reasonOf(error)})`);
  return {
    message: `${outcome.done} ${verb}`,
    error: failed.length === 0 ? '' : `Not done: ${failed.join('; ')}`,
  };
}
