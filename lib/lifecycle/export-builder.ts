// Builds one account export (docs/ACCOUNTS.md "Export"), streamed end to end so memory stays bounded for
// any library: `account.json` (records, albums, shares, orders, security events, written page by page as
// they are read) and then each original read from S3 as a stream, one at a time, stored uncompressed, all
// through one ZIP stream into a multipart upload under exports/. Then the owner gets the link by mail.
import { PassThrough, Readable } from 'node:stream';
import { ZipArchive, type ZipEntryData } from 'archiver';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { publicAccount } from '#lib/accounts/repository.ts';
import type { SecurityEvents } from '#lib/accounts/security-events.ts';
import type { OrderRepository } from '#lib/billing/orders.ts';
import type { AlbumService } from '#lib/files/albums.ts';
import type { FileRepository } from '#lib/files/files.ts';
import { ownerIndexPage } from '#lib/files/index-page.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { ownerShares } from '#lib/files/shares.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { conditionFailedReturns, type Item, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { exportReadyMail } from '#lib/platform/mail/templates.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { type ExportItem, type ExportLinks, exportKey, exportObjectKey } from './exports.ts';

/** A run that stopped (timeout, crash) leaves its export `running`: after this a later run takes it again. */
export const STALE_RUN_MS = 16 * 60_000;
/** Tries before an export is marked failed (the owner may ask again). */
const MAX_ATTEMPTS = 3;
const PAGE = 100;

/** Where an original sits in the ZIP: its id (unique) and a safe form of the name it was uploaded as. */
export const zipPathOf = (record: Pick<UploadRecord, 'id' | 'original_name'>) =>
  `originals/${record.id}-${record.original_name.replace(/[^\w.-]+/g, '_').slice(-100)}`;

async function* each<T>(read: (cursor?: string) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

/** What a share shows its owner: never its password's hash, nor index keys. */
function shareOf({ pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, password_hash, ...share }: Item) {
  return { ...share, has_password: password_hash !== undefined };
}

/** Appends one entry and resolves once the archive has taken it whole (so one source is open at a time). */
function append(archive: ZipArchive, source: Readable, data: ZipEntryData): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      archive.off('error', fail);
      resolve();
    };
    const fail = (error: Error) => {
      archive.off('entry', done);
      reject(error);
    };
    archive.once('entry', done);
    archive.once('error', fail);
    archive.append(source, data);
  });
}

export interface ExportBuilderDeps {
  table: Table;
  storage: FileStorage;
  accounts: AccountRepository;
  files: FileRepository;
  albums: AlbumService;
  orders: OrderRepository;
  events: SecurityEvents;
  mailer: Mailer;
  links: ExportLinks;
}

export class ExportBuilder {
  constructor(private readonly deps: ExportBuilderDeps) {}

  /**
   * Takes the account's listed export (unless another run has it), builds it, marks it ready and mails the
   * link; a failure puts it back for the next run, until MAX_ATTEMPTS. Returns whether it built one.
   */
  async process(accountId: string): Promise<boolean> {
    const { table } = this.deps;
    const now = table.clock();
    const claimed = await table
      .update<ExportItem>(exportKey(accountId), {
        UpdateExpression: 'SET #state = :running, started_at = :now ADD attempts :one',
        ConditionExpression: '#state = :pending OR (#state = :running AND started_at < :stale)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':running': 'running',
          ':pending': 'pending',
          ':now': now.toISOString(),
          ':one': 1,
          ':stale': new Date(now.getTime() - STALE_RUN_MS).toISOString(),
        },
      })
      .catch(conditionFailedReturns(undefined));
    if (!claimed) return false;
    let built: { size: number; files: number };
    try {
      built = await this.build(claimed);
    } catch (error) {
      const last = (claimed.attempts ?? 1) >= MAX_ATTEMPTS;
      log.warn('account export failed', { account_id: accountId, export_id: claimed.id, last, error });
      await this.finish(claimed, last ? 'failed' : 'pending', {});
      return false;
    }
    const { url, expiresAt } = await this.deps.links.link(claimed.id);
    await this.finish(claimed, 'ready', { ...built, link_expires_at: expiresAt.toISOString() });
    // Ready whatever the mail does: the console offers the same link (GET /api/v1/account/export).
    const account = await this.deps.accounts.get(accountId);
    if (account?.email) {
      const facts = { username: account.username, link: url, expiresAt, files: built.files };
      await this.deps.mailer
        .send(exportReadyMail(account.email, facts))
        .catch((error: unknown) => log.warn('export mail not sent', { account_id: accountId, error }));
    }
    return true;
  }

  private async finish(item: ExportItem, state: ExportItem['state'], fields: Partial<ExportItem>) {
    const values = {
      ...fields,
      ...(state === 'pending' ? {} : { finished_at: this.deps.table.clock().toISOString() }),
    };
    const names = Object.keys(values);
    await this.deps.table.update(exportKey(item.account_id), {
      UpdateExpression: `SET #state = :state${names.map((name) => `, ${name} = :${name}`).join('')}${state === 'pending' ? '' : ' REMOVE gsi2pk, gsi2sk'}`,
      ConditionExpression: 'id = :id',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':state': state,
        ':id': item.id,
        ...Object.fromEntries(Object.entries(values).map(([name, value]) => [`:${name}`, value])),
      },
    });
  }

  /** The ZIP, streamed to exports/<id>.zip; its size and how many originals it holds. */
  async build(item: ExportItem): Promise<{ size: number; files: number }> {
    const account = await this.deps.accounts.get(item.account_id);
    if (!account) throw new Error('the account is gone');
    const archive = new ZipArchive({ zlib: { level: 6 } });
    // archiver's stream is readable-stream's; the upload takes node's (with the archive's backpressure).
    const body = new PassThrough();
    // An archive's failure fails the upload; the upload's failure (reported by `uploaded`) ends the archive.
    archive.on('error', (error) => body.destroy(error));
    body.on('error', () => {});
    archive.pipe(body);
    const uploaded = this.deps.storage.putStream(exportObjectKey(item.id), body, 'application/zip');
    uploaded.catch(() => archive.abort());
    const owner = { id: account.id, role: account.role };
    const filePages = (cursor?: string) =>
      this.deps.files.list(owner, { limit: PAGE, ...(cursor ? { cursor } : {}) });
    const json = Readable.from(this.json(account.id, publicAccount(account), filePages), {
      objectMode: false,
    });
    // Each entry waits for the archive to take it, or for the upload to fail (which ends the export).
    const taken = (source: Readable, data: ZipEntryData) =>
      Promise.race([append(archive, source, data), uploaded]).catch((error: unknown) => {
        source.destroy();
        throw error;
      });
    await taken(json, { name: 'account.json', date: new Date(item.requested_at) });
    let files = 0;
    for await (const record of each(filePages)) {
      const stored = await this.deps.storage.open(record.key);
      if (!stored) {
        log.warn('an original is missing from the bucket; left out of the export', { key: record.key });
        continue;
      }
      await taken(stored.body, { name: zipPathOf(record), store: true, date: new Date(record.created_at) });
      files += 1;
    }
    await Promise.race([archive.finalize(), uploaded]);
    await uploaded;
    return { size: archive.pointer(), files };
  }

  /** account.json, a page of each listing at a time. */
  private async *json(
    accountId: string,
    account: object,
    filePages: (cursor?: string) => Promise<Page<UploadRecord>>,
  ): AsyncGenerator<Buffer> {
    const { albums, orders, events, table } = this.deps;
    const sections: Array<[string, AsyncGenerator<object>]> = [
      ['files', mapped(each(filePages), (record) => ({ ...record, zip_path: zipPathOf(record) }))],
      ['albums', each((cursor) => albums.list(accountId, { limit: PAGE, ...(cursor ? { cursor } : {}) }))],
      [
        'shares',
        mapped(
          each((cursor) =>
            ownerIndexPage<Item>(
              table,
              ownerShares(accountId),
              { pk: /^share#/, sk: 'share' },
              { limit: PAGE, cursor },
            ),
          ),
          shareOf,
        ),
      ],
      ['orders', each((cursor) => orders.listByUser(accountId, PAGE, cursor))],
      [
        'security_events',
        each((cursor) => events.page(accountId, { limit: PAGE, ...(cursor ? { cursor } : {}) })),
      ],
    ];
    yield Buffer.from(`{"format":1,"account":${JSON.stringify(account)}`);
    for (const [name, items] of sections) {
      yield Buffer.from(`,"${name}":[`);
      let first = true;
      for await (const entry of items) {
        yield Buffer.from(`${first ? '' : ','}\n${JSON.stringify(entry)}`);
        first = false;
      }
      yield Buffer.from(']');
    }
    yield Buffer.from('}\n');
  }
}

async function* mapped<T, U>(items: AsyncGenerator<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of items) yield map(item);
}
