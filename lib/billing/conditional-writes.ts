// Conditional writes shared by the billing repositories. One that lost its condition is usually a rule of
// ours that was hit, not a fault.
import { ConditionFailedError } from '#lib/platform/db/table.ts';

/** The write's result; when its condition no longer held, `refusal()` (the 404 or 409 naming the rule). */
export async function refuseIfLost<T>(write: Promise<T>, refusal: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw error instanceof ConditionFailedError ? refusal() : error;
  }
}

/**
 * An update of an existing item: `updated_at` and every field given a value (undefined leaves it as it is);
 * a field in `keepStored` is written only where the item has none yet.
 */
export function setFields(fields: object, updatedAt: string, keepStored: readonly string[] = []) {
  const names: Record<string, string> = { '#updated': 'updated_at' };
  const values: Record<string, unknown> = { ':updated': updatedAt };
  const sets = ['#updated = :updated'];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    const assigned = keepStored.includes(field) ? `if_not_exists(#${field}, :${field})` : `:${field}`;
    sets.push(`#${field} = ${assigned}`);
  }
  return {
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
