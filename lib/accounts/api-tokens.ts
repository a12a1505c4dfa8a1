// API tokens (docs/DESIGN.md 5): `ut_` + 43 base64url characters (32 random bytes), shown once; the table keeps
// only their SHA-256. Two items per token: the secret's hash (what authentication looks up) and the id
// (what revocation and the account's listing look up), written and deleted together. Only the id item is in
// the `owner` index: an index holds its items' table keys, and the hash item's key is the secret's hash
// (docs/DESIGN.md 19: no credential in an index). Each token carries its account's token epoch
// at creation: a password reset moves the epoch (in the reset's own transaction), and every older token
// stops working at once (docs/ACCOUNTS.md).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { isoWithOffset } from '#lib/platform/time.ts';
import { type ClientInfo, NO_CLIENT } from './client.ts';
import type { Principal } from './model.ts';
import { type AccountRepository, accountKey } from './repository.ts';
import type { SecurityEvents } from './security-events.ts';

/** API tokens are told apart from session tokens by their prefix (sessions are JWTs). */
export const API_TOKEN_PREFIX = 'ut_';

/** Characters of the secret shown in listings so people can tell their tokens apart (`ut_` + 5). */
export const DISPLAY_PREFIX_LENGTH = 8;

export const tokenHashKey = (hash: string) => ({ pk: `apitoken#${hash}`, sk: 'apitoken' });
export const tokenIdKey = (id: string) => ({ pk: `apitokenid#${id}`, sk: 'apitokenid' });
const accountIndex = (accountId: string) => `apitokens#${accountId}`;

/** The `owner` index attributes of a token's id item: its account's listing, newest first. */
export function listingOf(accountId: string, createdIso: string, id: string) {
  return { gsi1pk: accountIndex(accountId), gsi1sk: `${createdIso}#${id}` };
}

export interface ApiTokenView {
  id: string;
  name: string;
  prefix: string;
  last_used_at: string | null;
  created_at: string;
}

export interface CreatedApiToken {
  id: string;
  name: string;
  /** the secret: in this response only */
  token: string;
  prefix: string;
  created_at: string;
}

interface TokenItem {
  pk: string;
  sk: string;
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at?: string;
  /** The account's token epoch when the token was made (absent: 0). */
  token_epoch?: number;
  [attribute: string]: unknown;
}

const epochOf = (holder: { token_epoch?: number } | undefined) => holder?.token_epoch ?? 0;

/** The condition that the account's token epoch is still `epoch` (absent counts as 0) and it is active. */
function sameTokenEpoch(epoch: number) {
  return {
    ConditionExpression: `attribute_exists(pk) AND #status = :active AND (${epoch === 0 ? 'attribute_not_exists(token_epoch) OR ' : ''}token_epoch = :epoch)`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':active': 'active', ':epoch': epoch },
  };
}

export function hashApiToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function generateApiToken(random: (size: number) => Buffer = randomBytes): string {
  return `${API_TOKEN_PREFIX}${random(32).toString('base64url')}`;
}

function view(item: TokenItem): ApiTokenView {
  return {
    id: item.id,
    name: item.name,
    prefix: item.prefix,
    last_used_at: item.last_used_at ?? null,
    created_at: item.created_at,
  };
}

const invalid = () => errors.unauthorized('API token is invalid or revoked');

export interface ApiTokenServiceDeps {
  table: Table;
  accounts: Pick<AccountRepository, 'get'>;
  events: Pick<SecurityEvents, 'record'>;
}

export class ApiTokenService {
  constructor(private readonly deps: ApiTokenServiceDeps) {}

  /**
   * A new token stamped with the account's token epoch; the write is conditional on that epoch, so a token
   * created while a password reset lands is born revoked rather than surviving it.
   */
  async create(accountId: string, name: string, client: ClientInfo = NO_CLIENT): Promise<CreatedApiToken> {
    const account = await this.deps.accounts.get(accountId);
    if (account?.status !== 'active') throw errors.unauthorized('Session is invalid or expired');
    const epoch = epochOf(account);
    const now = this.deps.table.clock();
    const token = generateApiToken();
    const hash = hashApiToken(token);
    const id = randomUUID();
    const item: TokenItem = {
      ...tokenHashKey(hash),
      id,
      account_id: accountId,
      name,
      prefix: token.slice(0, DISPLAY_PREFIX_LENGTH),
      created_at: isoWithOffset(now),
      token_epoch: epoch,
    };
    await this.deps.table
      .transact([
        { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Put: {
            Item: {
              ...item,
              ...tokenIdKey(id),
              token_hash: hash,
              ...listingOf(accountId, now.toISOString(), id),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { ConditionCheck: { Key: accountKey(accountId), ...sameTokenEpoch(epoch) } },
      ])
      // The account was reset or disabled meanwhile: the caller's session is over too.
      .catch(
        conditionFailedAs((error) =>
          error.failedItems.includes(2) ? errors.unauthorized('Session is invalid or expired') : error,
        ),
      );
    await this.deps.events.record(accountId, 'token_created', client);
    return { id, name, token, prefix: item.prefix, created_at: item.created_at };
  }

  /** The account's working tokens, newest first, without secrets. */
  async list(accountId: string): Promise<ApiTokenView[]> {
    const [items, account] = await Promise.all([this.items(accountId), this.deps.accounts.get(accountId)]);
    return items.filter((item) => epochOf(item) === epochOf(account)).map(view);
  }

  private async items(accountId: string): Promise<TokenItem[]> {
    const out: TokenItem[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const { items, lastKey } = await this.deps.table.query<TokenItem>({
        IndexName: 'owner',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': accountIndex(accountId) },
        ScanIndexForward: false,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      });
      out.push(...items);
      startKey = lastKey;
    } while (startKey);
    return out;
  }

  /** Revokes the caller's token; someone else's (or an unknown) id is 404. */
  async revoke(accountId: string, id: string, client: ClientInfo = NO_CLIENT): Promise<void> {
    const ref = /^[0-9a-f-]{36}$/.test(id)
      ? await this.deps.table.get<{ pk: string; sk: string; account_id: string; token_hash: string }>(
          tokenIdKey(id),
        )
      : undefined;
    if (!ref || ref.account_id !== accountId) throw errors.notFound('token: not found');
    const owned = {
      ConditionExpression: 'account_id = :account',
      ExpressionAttributeValues: { ':account': accountId },
    };
    await this.deps.table
      .transact([
        { Delete: { Key: tokenHashKey(ref.token_hash), ...owned } },
        { Delete: { Key: tokenIdKey(id), ...owned } },
      ])
      .catch(conditionFailedAs(() => errors.notFound('token: not found')));
    await this.deps.events.record(accountId, 'token_revoked', client);
  }

  /**
   * Deletes every token item of the account (after a password reset, whose epoch bump already stopped
   * them): tidies the listing and the table. Best effort per token; a leftover is dead anyway.
   */
  async deleteAll(accountId: string): Promise<number> {
    const listed = await this.items(accountId);
    // Nothing to delete (BatchGetItem refuses an empty list of keys).
    if (listed.length === 0) return 0;
    // The index holds no hash: the id items themselves name their hash item.
    const items = (
      await this.deps.table.getMany<TokenItem & { token_hash?: string }>(
        listed.map((item) => tokenIdKey(item.id)),
      )
    ).filter((item): item is TokenItem & { token_hash: string } => typeof item?.token_hash === 'string');
    const results = await Promise.allSettled(
      items.map((item) =>
        this.deps.table.transact([
          { Delete: { Key: tokenHashKey(item.token_hash) } },
          { Delete: { Key: tokenIdKey(item.id) } },
        ]),
      ),
    );
    const failed = results.filter((result) => result.status === 'rejected').length;
    if (failed > 0) log.warn('some revoked API tokens were not deleted', { account_id: accountId, failed });
    return items.length - failed;
  }

  /**
   * The caller behind an API token: the hash item, then the account (must be active). last_used_at is
   * written only when it is a minute old or more, by a conditional update, so concurrent requests move
   * it once; a failure to record it never fails the request.
   */
  async verify(token: string): Promise<Principal> {
    if (!/^ut_[A-Za-z0-9_-]{43}$/.test(token)) throw invalid();
    const key = tokenHashKey(hashApiToken(token));
    const item = await this.deps.table.get<TokenItem>(key);
    if (!item) throw invalid();
    const now = this.deps.table.clock();
    const minuteAgo = isoWithOffset(new Date(now.getTime() - 60_000));
    const [account] = await Promise.all([
      this.deps.accounts.get(item.account_id),
      item.last_used_at === undefined || item.last_used_at <= minuteAgo
        ? this.touch(key, item.id, isoWithOffset(now), minuteAgo)
        : undefined,
    ]);
    // Read on every request, never cached: a disabled account or a reset password stops the token at once.
    if (account?.status !== 'active' || epochOf(account) !== epochOf(item)) throw invalid();
    return { accountId: account.id, role: account.role, via: 'api_token', credentialId: item.id, account };
  }

  /** Both items: the hash item's copy decides the next touch, the id item's is what the listing shows. */
  private async touch(
    key: { pk: string; sk: string },
    id: string,
    now: string,
    minuteAgo: string,
  ): Promise<void> {
    try {
      await this.deps.table.transact([
        {
          Update: {
            Key: key,
            UpdateExpression: 'SET last_used_at = :now',
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(last_used_at) OR last_used_at <= :ago)',
            ExpressionAttributeValues: { ':now': now, ':ago': minuteAgo },
          },
        },
        {
          Update: {
            Key: tokenIdKey(id),
            UpdateExpression: 'SET last_used_at = :now',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': now },
          },
        },
      ]);
    } catch (error) {
      if (error instanceof ConditionFailedError) return; // someone else recorded it this minute
      log.warn('could not record API token use', { error });
    }
  }
}
