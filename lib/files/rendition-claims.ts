// Which renditions are being rendered, and which failed lately (docs/IMAGES.md "One render at a time"): one
// item per canonical rendition, keyed by a hash of where it is stored. A render takes it with a conditional
// put (absent, or past its `expires_at`), so of concurrent first requests on any number of function
// instances one renders and the others wait for its stored copy; a refusal (415, 422) replaces the claim
// for `images.failure_cache_seconds`, so the same rendition answers it without being rendered again.
import { createHash, randomUUID } from 'node:crypto';
import { AppError, type ErrorName } from '#lib/core/errors.ts';
import { conditionFailedReturns, epochSeconds, type Table } from '#lib/platform/db/table.ts';

/** The partition of every claim: the render function may touch no other (infra/service-function.ts). */
export const RENDITION_CLAIM_PREFIX = 'RENDITION#';

export type Claim =
  | { kind: 'won'; owner: string }
  | { kind: 'rendering' }
  | { kind: 'failed'; refusal: AppError };

type ClaimItem = Record<string, unknown> & {
  pk: string;
  sk: string;
  state: 'rendering' | 'failed';
  owner?: string;
  error_name?: ErrorName;
  message?: string;
  data?: unknown;
  expires_at: number;
};

export interface RenditionClaimsDeps {
  table: Table;
}

/** A stored rendition's key can be long and names a private file: the table holds its hash only. */
function keyOf(renditionKey: string) {
  const hash = createHash('sha256').update(renditionKey).digest('base64url');
  return { pk: `${RENDITION_CLAIM_PREFIX}${hash}`, sk: 'CLAIM' };
}

export class RenditionClaims {
  constructor(private readonly deps: RenditionClaimsDeps) {}

  private until(seconds: number): number {
    return epochSeconds(this.deps.table.clock()) + seconds;
  }

  /** The rendition taken for `seconds`; or held by another render; or its remembered refusal. */
  async claim(renditionKey: string, seconds: number): Promise<Claim> {
    const key = keyOf(renditionKey);
    const owner = randomUUID();
    const item: ClaimItem = { ...key, state: 'rendering', owner, expires_at: this.until(seconds) };
    const won = await this.deps.table.putNew(item).then(() => true, conditionFailedReturns(false));
    if (won) return { kind: 'won', owner };
    const held = await this.deps.table.get<ClaimItem>(key);
    if (held?.state !== 'failed') return { kind: 'rendering' };
    return {
      kind: 'failed',
      refusal: new AppError(held.error_name ?? 'unprocessable', held.message ?? 'image: cannot be rendered', {
        data: held.data ?? null,
      }),
    };
  }

  /** Remembers `refusal` for `seconds` in place of the claim. */
  async fail(renditionKey: string, refusal: AppError, seconds: number): Promise<void> {
    const item: ClaimItem = {
      ...keyOf(renditionKey),
      state: 'failed',
      error_name: refusal.errorName,
      message: refusal.message,
      data: refusal.data ?? null,
      expires_at: this.until(seconds),
    };
    await this.deps.table.put(item);
  }

  /** Gives the claim up (the render failed for a reason of the service's): the next request may render. */
  async release(renditionKey: string, owner: string): Promise<void> {
    await this.deps.table
      .delete(keyOf(renditionKey), {
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      })
      .catch(conditionFailedReturns(undefined));
  }
}
