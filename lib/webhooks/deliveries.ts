// Webhook deliveries (docs/WEBHOOKS.md "Delivery"): each event an account's endpoints take becomes one
// delivery item per endpoint (its key from the event, so a replayed stream record makes none twice), tried
// at once by the outbox drain and then, while it fails, by the drain's every-minute retry schedule, which
// reads the due ones from the sparse `due` index. Every attempt is recorded on the item (status or error,
// time taken, a short prefix of the answer); an item is kept DELIVERY_RETENTION_DAYS, then the TTL removes it.
import { createHmac } from 'node:crypto';
import { readShards, type ShardedListing, shardPartition } from '#lib/platform/db/shards.ts';
import {
  ConditionFailedError,
  conditionFailedReturns,
  epochSeconds,
  type Key,
  type Table,
} from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { TargetPolicy } from './addresses.ts';
import { type EndpointItem, endpointKey, type WebhookEndpoints, type WebhookEventType } from './endpoints.ts';
import { eventOf, type StreamChange } from './events.ts';
import { postSigned } from './post.ts';

/** One event as its receivers get it (the body), and whose it is. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  created_at: string;
  account_id: string;
  data: Record<string, unknown>;
}

/** Waits after the 1st, 2nd, ... failed attempt; none is made later than RETRY_WINDOW_MS after the event. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000];
export const RETRY_WINDOW_MS = 86_400_000;
/** An attempt holds its delivery this long; one that died mid-way frees it by expiring. */
const LEASE_MS = 60_000;
const DELIVERY_RETENTION_DAYS = 7;
const LISTED = 20;

export interface Attempt {
  at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
  /** The first bytes of the answer's body, as text. */
  response: string;
}

export type DeliveryItem = Key & {
  event_id: string;
  type: WebhookEventType;
  endpoint_id: string;
  account_id: string;
  body: string;
  created_ms: number;
  state: 'pending' | 'delivered' | 'failed' | 'cancelled';
  next_ms: number;
  attempts: Attempt[];
};

export interface DeliveryView {
  id: string;
  type: WebhookEventType;
  created_at: string;
  state: DeliveryItem['state'];
  next_attempt_at: string | null;
  attempts: Attempt[];
}

export interface WebhookDeliveriesDeps {
  table: Table;
  endpoints: WebhookEndpoints;
  policy: TargetPolicy;
  /** `listing_shards`: the due listing's shards. */
  listingShards: number;
  /** `base_url`: the events' file URLs. */
  baseUrl: string;
  /** Per attempt (default 5 s). */
  timeoutMs?: number;
}

export class WebhookDeliveries {
  private readonly due: ShardedListing;

  constructor(private readonly deps: WebhookDeliveriesDeps) {
    this.due = { index: 'due', name: 'hookdue', count: deps.listingShards };
  }

  /** The events of the stream's changes (events.ts), fanned out. */
  async fromStream(changes: StreamChange[]): Promise<void> {
    const read = (key: Key) => this.deps.table.get(key, { includeExpired: true });
    const events = await Promise.all(changes.map((change) => eventOf(change, read, this.deps.baseUrl)));
    await this.fanOut(events.filter((event) => event !== undefined));
  }

  /** Makes the deliveries of these events to the endpoints that take them, then tries each at once. */
  async fanOut(events: WebhookEvent[]): Promise<void> {
    const made = await Promise.all(events.map((event) => this.make(event)));
    await Promise.all(made.flat().map((key) => this.attemptQuietly(key)));
  }

  private async make(event: WebhookEvent): Promise<Key[]> {
    const endpoints = await this.deps.endpoints.items(event.account_id);
    const { table } = this.deps;
    const created = new Date(event.created_at).getTime();
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.created_at,
      data: event.data,
    });
    const keys: Key[] = [];
    // An endpoint takes the events of its types that happened since it was registered (a replayed or late
    // stream record brings none from before).
    const takes = (one: EndpointItem) =>
      one.enabled && one.events.includes(event.type) && Date.parse(one.created_at) <= created;
    for (const endpoint of endpoints.filter(takes)) {
      const now = table.clock().getTime();
      const item: DeliveryItem & Record<string, unknown> = {
        pk: `hookdlv#${endpoint.id}`,
        sk: `${new Date(created).toISOString()}#${event.id}`,
        event_id: event.id,
        type: event.type,
        endpoint_id: endpoint.id,
        account_id: event.account_id,
        body,
        created_ms: created,
        state: 'pending',
        next_ms: now,
        attempts: [],
        ...this.dueKeys(endpoint.id, event.id, now),
        expires_at: epochSeconds(new Date(now + DELIVERY_RETENTION_DAYS * 86_400_000)),
      };
      const fresh = await table
        .put(item, { ConditionExpression: 'attribute_not_exists(pk)' })
        .then(() => true, conditionFailedReturns(false));
      if (fresh) keys.push({ pk: item.pk, sk: item.sk });
    }
    return keys;
  }

  private dueKeys(endpointId: string, eventId: string, atMs: number) {
    return {
      gsi3pk: shardPartition(this.due, eventId),
      gsi3sk: `${new Date(atMs).toISOString()}#${endpointId}#${eventId}`,
    };
  }

  /** Tries every delivery due now (the drain's every-minute schedule), at most `limit`; answers how many. */
  async retryDue(limit = 500): Promise<number> {
    const to = `${this.deps.table.clock().toISOString()}#~`;
    let tried = 0;
    let cursor: string | undefined;
    do {
      const page = await readShards<Key>(this.deps.table, this.due, {
        limit: Math.min(100, limit - tried),
        cursor,
        order: 'oldest-first',
        to,
      });
      await Promise.all(page.items.map((item) => this.attemptQuietly({ pk: item.pk, sk: item.sk })));
      tried += page.items.length;
      cursor = page.next_cursor ?? undefined;
    } while (cursor && tried < limit);
    return tried;
  }

  /** An attempt whose failure to run (not the receiver's) is logged: its lease lapses, a later run retries. */
  private attemptQuietly(key: Key): Promise<void> {
    return this.attempt(key).catch((error: unknown) =>
      log.warn('a webhook attempt could not run; it is retried', { delivery: key.sk, error }),
    );
  }

  /** One attempt of one delivery, unless it is not due or another attempt holds it. */
  private async attempt(key: Key): Promise<void> {
    const { table } = this.deps;
    const nowMs = table.clock().getTime();
    const lease = nowMs + LEASE_MS;
    let item: DeliveryItem;
    try {
      item = await table.update<DeliveryItem>(key, {
        UpdateExpression: 'SET next_ms = :lease, gsi3sk = :sk',
        ConditionExpression: '#state = :pending AND next_ms <= :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':lease': lease,
          ':sk': `${new Date(lease).toISOString()}#${key.sk}`,
          ':pending': 'pending',
          ':now': nowMs,
        },
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) return;
      throw error;
    }
    const endpoint = await table.get<EndpointItem>(endpointKey(item.account_id, item.endpoint_id));
    if (!endpoint?.enabled) return this.finish(item, lease, 'cancelled');
    const at = table.clock();
    const answer = await postSigned({
      url: endpoint.url,
      body: item.body,
      signature: signatureHeader(await this.deps.endpoints.secretOf(endpoint), item.body, at),
      policy: this.deps.policy,
      timeoutMs: this.deps.timeoutMs ?? 5_000,
    });
    const attempt: Attempt = { at: isoWithOffset(at), ...answer };
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    if (ok) return this.finish(item, lease, 'delivered', attempt);
    const delay = RETRY_DELAYS_MS[item.attempts.length];
    const next = at.getTime() + (delay ?? RETRY_WINDOW_MS);
    if (delay === undefined || next > item.created_ms + RETRY_WINDOW_MS) {
      log.warn('a webhook delivery failed for good', { endpoint: item.endpoint_id, event: item.event_id });
      return this.finish(item, lease, 'failed', attempt);
    }
    await this.record(item, lease, attempt, {
      UpdateExpression: 'SET attempts = list_append(attempts, :attempt), next_ms = :next, gsi3sk = :sk',
      ExpressionAttributeValues: {
        ':next': next,
        ':sk': this.dueKeys(item.endpoint_id, item.event_id, next).gsi3sk,
      },
    });
  }

  private finish(item: DeliveryItem, lease: number, state: DeliveryItem['state'], attempt?: Attempt) {
    return this.record(item, lease, attempt, {
      UpdateExpression: `SET #state = :state${attempt ? ', attempts = list_append(attempts, :attempt)' : ''} REMOVE gsi3pk, gsi3sk`,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':state': state },
    });
  }

  /** Writes the outcome of an attempt, while the lease is still ours. */
  private async record(
    item: DeliveryItem,
    lease: number,
    attempt: Attempt | undefined,
    update: {
      UpdateExpression: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<void> {
    await this.deps.table
      .update(
        { pk: item.pk, sk: item.sk },
        {
          ...update,
          ConditionExpression: 'next_ms = :lease',
          ExpressionAttributeValues: {
            ...update.ExpressionAttributeValues,
            ':lease': lease,
            ...(attempt ? { ':attempt': [attempt] } : {}),
          },
        },
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionFailedError)) throw error;
        log.warn('a webhook attempt outlived its lease; its outcome is not recorded', {
          event: item.event_id,
        });
      });
  }

  /** The endpoint's latest deliveries, newest first, with their attempts. */
  async list(accountId: string, endpointId: string): Promise<DeliveryView[]> {
    await this.deps.endpoints.get(accountId, endpointId);
    const { items } = await this.deps.table.query<DeliveryItem>({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `hookdlv#${endpointId}` },
      ScanIndexForward: false,
      Limit: LISTED,
    });
    return items.map((item) => ({
      id: item.event_id,
      type: item.type,
      created_at: isoWithOffset(new Date(item.created_ms)),
      state: item.state,
      next_attempt_at: item.state === 'pending' ? isoWithOffset(new Date(item.next_ms)) : null,
      attempts: item.attempts,
    }));
  }
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, the Webhook-Signature header. */
export function signatureHeader(secret: string, body: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}
