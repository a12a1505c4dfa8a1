// An owner's export (docs/ACCOUNTS.md "Export"): a ZIP of the originals and a JSON of the account's records,
// built by the lifecycle worker (export-builder.ts). One export at a time per account: the account's
// `export` item is written only when none is pending or running. While it waits or runs it sits in the
// sparse sharded listing `exports#<n>` of the `listing` index, which the worker reads. The mailed link is
// the service's own (an HMAC of the id and expiry, ExportLinks): valid 24 h whatever credentials the worker
// had, it answers a 302 to a fresh short presigned GET of the ZIP.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Account } from '#lib/accounts/model.ts';
import { errors } from '#lib/core/errors.ts';
import { EXPORT_PREFIX } from '#lib/files/prefixes.ts';
import { shardPartition } from '#lib/platform/db/shards.ts';
import { type Clock, conditionFailedAs, type Item, type Table } from '#lib/platform/db/table.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export const EXPORTS_LISTING = 'exports';
export const exportKey = (accountId: string) => ({ pk: `account#${accountId}`, sk: 'export' });
export const exportObjectKey = (id: string) => `${EXPORT_PREFIX}${id}.zip`;
/** How long the mailed link works. */
export const LINK_VALID_HOURS = 24;
/** How long the presigned GET a link redirects to works. */
const PRESIGNED_SECONDS = 300;
const EXPORT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type ExportState = 'pending' | 'running' | 'ready' | 'failed';

export interface ExportItem extends Item {
  pk: string;
  sk: string;
  id: string;
  account_id: string;
  state: ExportState;
  requested_at: string;
  started_at?: string;
  finished_at?: string;
  attempts?: number;
  /** The ZIP's size and how many originals it holds, once ready. */
  size?: number;
  files?: number;
  link_expires_at?: string;
}

const at = (iso: string | undefined) => (iso ? isoWithOffset(new Date(iso)) : null);

export function exportView(item: ExportItem, downloadUrl: string | null = null) {
  return {
    id: item.id,
    state: item.state,
    requested_at: at(item.requested_at)!,
    finished_at: at(item.finished_at),
    size: item.size ?? null,
    files: item.files ?? null,
    link_expires_at: at(item.link_expires_at),
    /** For the owner only (GET): a fresh 24-hour link to a ready export, as the mail's. */
    download_url: downloadUrl,
  };
}

export interface ExportLinksDeps {
  /** A key sealed by the master key (lib/accounts/sealed-key.ts `export-link`). */
  key: () => Promise<Buffer>;
  baseUrl: string;
  clock: Clock;
}

/** The mailed download links: `…/download?expires=<epoch s>&sig=<HMAC-SHA256 of id and expiry>`. */
export class ExportLinks {
  constructor(private readonly deps: ExportLinksDeps) {}

  private async sign(id: string, expires: string): Promise<Buffer> {
    return createHmac('sha256', await this.deps.key())
      .update(`export-download\n${id}\n${expires}`)
      .digest();
  }

  /** A link valid LINK_VALID_HOURS from now, and when it ends. */
  async link(id: string): Promise<{ url: string; expiresAt: Date }> {
    const expiresAt = new Date(this.deps.clock().getTime() + LINK_VALID_HOURS * 3_600_000);
    const expires = String(Math.floor(expiresAt.getTime() / 1000));
    const sig = (await this.sign(id, expires)).toString('base64url');
    const base = this.deps.baseUrl.replace(/\/+$/, '');
    return { url: `${base}/api/v1/account/exports/${id}/download?expires=${expires}&sig=${sig}`, expiresAt };
  }

  /** 403 for a signature that does not match (compared in constant time), 410 past its expiry. */
  async check(id: string, expires: string, sig: string): Promise<void> {
    const expected = await this.sign(id, expires);
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw errors.forbidden('sig: the link is not valid');
    }
    if (Number(expires) * 1000 <= this.deps.clock().getTime())
      throw errors.gone('expires: the link has expired');
  }
}

export interface AccountExportsDeps {
  table: Table;
  storage: FileStorage;
  links: ExportLinks;
  listingShards: number;
}

export class AccountExports {
  constructor(private readonly deps: AccountExportsDeps) {}

  /** POST /api/v1/account/export: a new export, unless one is pending or running (409). */
  async request(account: Account) {
    const { table } = this.deps;
    const requested = table.clock().toISOString();
    const listing = { name: EXPORTS_LISTING, count: this.deps.listingShards };
    const item: ExportItem = {
      ...exportKey(account.id),
      id: randomUUID(),
      account_id: account.id,
      state: 'pending',
      requested_at: requested,
    };
    await table
      .put(
        { ...item, gsi2pk: shardPartition(listing, account.id), gsi2sk: `${requested}#${account.id}` },
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #state IN (:ready, :failed)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':ready': 'ready', ':failed': 'failed' },
        },
      )
      .catch(
        conditionFailedAs(() => errors.conflict('An export is already being prepared for this account')),
      );
    return exportView(item);
  }

  /**
   * GET /api/v1/account/export: the latest export's state, or null when there was none; a ready one with a
   * fresh link (an account without an address has no mail to find it in).
   */
  async latest(account: Account) {
    const item = await this.deps.table.get<ExportItem>(exportKey(account.id));
    if (!item) return null;
    return exportView(item, item.state === 'ready' ? (await this.deps.links.link(item.id)).url : null);
  }

  /** The mailed link: checked, then a 302 target (a short presigned GET), or 404 once the ZIP is gone. */
  async download(id: string, query: { expires: string; sig: string }): Promise<string> {
    if (!EXPORT_ID.test(id)) throw errors.notFound('export: not found');
    await this.deps.links.check(id, query.expires, query.sig);
    const key = exportObjectKey(id);
    if (!(await this.deps.storage.exists(key))) throw errors.notFound('export: not found');
    return this.deps.storage.presignGet(key, PRESIGNED_SECONDS, `export-${id}.zip`);
  }
}
