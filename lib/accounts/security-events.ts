// The record of security events per account (docs/ACCOUNTS.md "Security events"): items in the
// account's own partition, newest first by sort key, deleted by DynamoDB's TTL after 90 days.
import { randomBytes } from 'node:crypto';
import type { Page } from '#lib/platform/db/paging.ts';
import { decodeCursor, encodeCursor, epochSeconds, type Item, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import type { ClientInfo } from './client.ts';

export const SECURITY_EVENT_TYPES = [
  'login',
  'login_failed',
  'totp_enabled',
  'totp_disabled',
  'totp_reset',
  'recovery_code_used',
  'recovery_codes_regenerated',
  'password_changed',
  'password_reset',
  'email_changed',
  'session_revoked',
  'token_created',
  'token_revoked',
  'payment_gateway_changed',
  'passkey_added',
  'passkey_removed',
  'deletion_scheduled',
  'provider_linked',
  'provider_unlinked',
] as const;

/** How a `login` event's session was earned. */
export const LOGIN_METHODS = [
  'password',
  'totp',
  'recovery_code',
  'passkey',
  'password_reset',
  'provider',
] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];

export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

const EVENT_PREFIX = 'event#';
/** The sort key of an event, as a cursor may name it. */
const EVENT_KEY = /^event#/;

export interface SecurityEventView {
  type: SecurityEventType;
  at: string;
  ip: string | null;
  user_agent: string | null;
  /** `login` events: how the session was earned. */
  method?: LoginMethod;
}

interface EventItem extends Item {
  pk: string;
  sk: string;
  type: SecurityEventType;
  at: string;
  ip?: string;
  user_agent?: string;
  method?: LoginMethod;
}

const partitionOf = (accountId: string) => `account#${accountId}`;

export interface SecurityEventsDeps {
  table: Table;
}

export class SecurityEvents {
  constructor(private readonly deps: SecurityEventsDeps) {}

  /** The item of one event, for callers that write it inside their own transaction. */
  item(
    accountId: string,
    type: SecurityEventType,
    client: ClientInfo,
    details: { method?: LoginMethod } = {},
  ): EventItem & { expires_at: number } {
    const now = this.deps.table.clock();
    // Time first so the sort key orders events; within one millisecond this process's monotonic clock
    // keeps them in order, and the random tail keeps two containers' events apart.
    const tiebreak = process.hrtime.bigint().toString().padStart(20, '0');
    return {
      pk: partitionOf(accountId),
      sk: `${EVENT_PREFIX}${now.toISOString()}#${tiebreak}#${randomBytes(4).toString('base64url')}`,
      type,
      at: now.toISOString(),
      ...(client.ip ? { ip: client.ip } : {}),
      ...(client.userAgent ? { user_agent: client.userAgent } : {}),
      ...(details.method ? { method: details.method } : {}),
      expires_at: epochSeconds(now) + 90 * 86_400,
    };
  }

  /**
   * Records an event after the change it describes has happened. A failure is logged, never thrown: the
   * change stands and the caller's answer must say so.
   */
  async record(accountId: string, type: SecurityEventType, client: ClientInfo): Promise<void> {
    try {
      await this.deps.table.put(this.item(accountId, type, client));
    } catch (error) {
      log.warn('security event not recorded', {
        type,
        account_id: accountId,
        error_name: (error as Error)?.name,
      });
    }
  }

  /** The account's events, newest first, one cursor page at a time. */
  async page(
    accountId: string,
    request: { limit: number; cursor?: string },
  ): Promise<Page<SecurityEventView>> {
    const partition = partitionOf(accountId);
    // The last key of this account's event listing, nothing else (another account's events included).
    const start = decodeCursor(request.cursor, { pk: partition, sk: EVENT_KEY });
    const { items, lastKey } = await this.deps.table.query<EventItem>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': EVENT_PREFIX },
      ScanIndexForward: false,
      Limit: request.limit,
      ...(start ? { ExclusiveStartKey: start } : {}),
    });
    return {
      items: items.map((item) => ({
        type: item.type,
        at: isoWithOffset(new Date(item.at)),
        ip: item.ip ?? null,
        user_agent: item.user_agent ?? null,
        ...(item.method ? { method: item.method } : {}),
      })),
      next_cursor: encodeCursor(lastKey),
    };
  }
}
