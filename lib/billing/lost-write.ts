// A conditional write that lost its condition is usually a rule of ours that was hit, not a fault.
import { ConditionFailedError } from '#lib/platform/db/table.ts';

/** The write's result; when its condition no longer held, `refusal()` (the 404 or 409 naming the rule). */
export async function refuseIfLost<T>(write: Promise<T>, refusal: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw error instanceof ConditionFailedError ? refusal() : error;
  }
}
