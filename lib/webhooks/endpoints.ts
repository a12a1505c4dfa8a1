// An account's webhook endpoints (docs/WEBHOOKS.md): at most MAX_ENDPOINTS, each a URL, the events it
// takes and whether it is on, with a signing secret shown once at creation and stored sealed by the master
// key. The limit holds under concurrent creations: each creation raises the account's counter in the same
// transaction, on the condition that it is below the limit; a deletion lowers it in its own.
import { randomBytes, randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import { ConditionFailedError, conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { checkTargetUrl, type TargetPolicy } from './addresses.ts';

export const MAX_ENDPOINTS = 5;
export const WEBHOOK_EVENTS = ['file.uploaded', 'file.deleted', 'order.paid'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** The account's endpoints and their counter (an account's deletion removes the partition). */
export const webhooksPartition = (accountId: string) => `hooks#${accountId}`;
const partition = webhooksPartition;
const ENDPOINT_SK = 'endpoint#';
export const endpointKey = (accountId: string, id: string) => ({
  pk: partition(accountId),
  sk: `${ENDPOINT_SK}${id}`,
});
const counterKey = (accountId: string) => ({ pk: partition(accountId), sk: 'count' });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const notFound = () => errors.notFound('webhook: not found');

/** An endpoint as stored: its secret only sealed. */
export type EndpointItem = {
  pk: string;
  sk: string;
  id: string;
  account_id: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  secret_sealed: string;
  created_at: string;
};

/** What the owner sees of an endpoint: never its secret. */
export interface EndpointView {
  id: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  created_at: string;
}

export const endpointView = (item: EndpointItem): EndpointView => ({
  id: item.id,
  url: item.url,
  events: item.events,
  enabled: item.enabled,
  created_at: item.created_at,
});

const secretContext = (item: Pick<EndpointItem, 'account_id' | 'id'>) => ({
  purpose: 'webhook',
  account: item.account_id,
  endpoint: item.id,
});

export interface WebhookEndpointsDeps {
  table: Table;
  masterKey: () => Promise<MasterKey>;
  policy: TargetPolicy;
}

export class WebhookEndpoints {
  constructor(private readonly deps: WebhookEndpointsDeps) {}

  /** A new endpoint and its secret (`whsec_...`), shown in this answer only; 409 past the limit. */
  async create(
    accountId: string,
    input: { url: string; events: WebhookEventType[]; enabled?: boolean },
  ): Promise<EndpointView & { secret: string }> {
    const { table, masterKey, policy } = this.deps;
    const url = checkTargetUrl(input.url, policy);
    const id = randomUUID();
    const secret = `whsec_${randomBytes(24).toString('base64url')}`;
    const item: EndpointItem = {
      ...endpointKey(accountId, id),
      id,
      account_id: accountId,
      url,
      events: [...new Set(input.events)],
      enabled: input.enabled ?? true,
      secret_sealed: await (await masterKey()).encrypt(secret, secretContext({ account_id: accountId, id })),
      created_at: isoWithOffset(table.clock()),
    };
    try {
      await table.transact([
        {
          Update: {
            Key: counterKey(accountId),
            UpdateExpression: 'ADD endpoints :one',
            ConditionExpression: 'attribute_not_exists(endpoints) OR endpoints < :max',
            ExpressionAttributeValues: { ':one': 1, ':max': MAX_ENDPOINTS },
          },
        },
        { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      ]);
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      if (error.failedItems.includes(0))
        throw errors.conflict(`An account holds at most ${MAX_ENDPOINTS} webhook endpoints`);
      throw errors.conflict('webhooks: changed by another request; try again');
    }
    return { ...endpointView(item), secret };
  }

  /** The account's endpoints as stored (the drain's fan-out and the sender read their secrets). */
  async items(accountId: string): Promise<EndpointItem[]> {
    const { items } = await this.deps.table.query<EndpointItem>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': partition(accountId), ':sk': ENDPOINT_SK },
    });
    return items;
  }

  async list(accountId: string): Promise<EndpointView[]> {
    return (await this.items(accountId)).map(endpointView);
  }

  /** The caller's endpoint, else 404. */
  async get(accountId: string, id: string): Promise<EndpointItem> {
    const item = UUID.test(id)
      ? await this.deps.table.get<EndpointItem>(endpointKey(accountId, id))
      : undefined;
    if (!item) throw notFound();
    return item;
  }

  /** Turns the caller's endpoint on or off (a disabled one's pending deliveries are dropped). */
  async setEnabled(accountId: string, id: string, enabled: boolean): Promise<EndpointView> {
    if (!UUID.test(id)) throw notFound();
    const item = await this.deps.table
      .update<EndpointItem>(endpointKey(accountId, id), {
        UpdateExpression: 'SET enabled = :enabled',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':enabled': enabled },
      })
      .catch(conditionFailedAs(notFound));
    return endpointView(item);
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!UUID.test(id)) throw notFound();
    await this.deps.table
      .transact([
        { Delete: { Key: endpointKey(accountId, id), ConditionExpression: 'attribute_exists(pk)' } },
        {
          Update: {
            Key: counterKey(accountId),
            UpdateExpression: 'ADD endpoints :minus',
            ConditionExpression: 'endpoints > :zero',
            ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
          },
        },
      ])
      .catch((error: unknown) => {
        if (error instanceof ConditionFailedError) throw notFound();
        throw error;
      });
  }

  /** The endpoint's signing secret (for the sender only). */
  async secretOf(item: EndpointItem): Promise<string> {
    const key = await this.deps.masterKey();
    return (await key.decrypt(item.secret_sealed, secretContext(item))).toString('utf8');
  }
}
