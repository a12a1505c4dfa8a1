// The bandwidth worker's work (docs/UPLOADS.md "Bandwidth"), every 5 minutes: each CDN log object not yet
// counted is read and its bytes under /i/ added to one item per owner tag and month, in one transaction with
// the object's claim (`bwlog#<key>`), so an object retried or read by two runs at once counts once. Then each
// owner counted this run, and each owner stopped before, is held against the cap in force: one notice mail
// at 80 % and one at 100 % per month (each a conditional write first), serving stopped past the cap plus
// `bandwidth.grace_percent` (lib/files/owner-rules.ts, at the edge within two minutes), and served again
// once under it (a bigger plan, or a new month). A tag's owner is read once from the file record a key of it
// names (its uuid is the record's id) and kept on the month's item.
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { TABLE } from '#lib/platform/db/keys.ts';
import { conditionFailedReturns, epochSeconds, type Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import { bandwidthNoticeMail } from '#lib/platform/mail/templates.ts';
import type { AccessLogStore } from '#lib/platform/storage/access-logs.ts';
import { type BandwidthUsage, bandwidthKey, monthOf } from './bandwidth.ts';
import { bytesPerOwnerMonth, type ServedSum } from './cdn-log.ts';
import { fileKey } from './files.ts';
import { parseStorageKey } from './names.ts';
import type { OwnerRulesDesk } from './owner-rules.ts';

/** How far back each run lists log objects: CloudFront delivers nearly all within hours, some within a day. */
const LOOKBACK_MS = 2 * 24 * 60 * 60 * 1000;
/** Tags per transaction beside the claim (DynamoDB allows 100 items). */
const TAGS_PER_WRITE = 99;
const STOPPED = { pk: 'bwstopped' };
const claimKey = (key: string, part: number) => ({ pk: `bwlog#${key}`, sk: String(part) });

export interface BandwidthRun {
  objects: number;
  owners: number;
  stopped: number;
  resumed: number;
}

export interface BandwidthMeterDeps {
  table: Table;
  logs: AccessLogStore;
  usage: BandwidthUsage;
  accounts: Pick<AccountRepository, 'get'>;
  ownerRules: Pick<OwnerRulesDesk, 'setStopped'>;
  mailer: Mailer;
  /** `bandwidth.grace_percent`. */
  gracePercent: number;
}

export class BandwidthMeter {
  constructor(private readonly deps: BandwidthMeterDeps) {}

  async run(): Promise<BandwidthRun> {
    const { table, logs } = this.deps;
    const now = table.clock();
    const keys = await logs.keysSince(new Date(now.getTime() - LOOKBACK_MS));
    const claimed: unknown[] = [];
    for (let start = 0; start < keys.length; start += 100) {
      claimed.push(...(await table.getMany(keys.slice(start, start + 100).map((key) => claimKey(key, 0)))));
    }
    const fresh = keys.filter((_, index) => claimed[index] === undefined);
    const tags = new Set<string>();
    let objects = 0;
    for (const key of fresh) {
      const sums = await this.count(key, await logs.read(key));
      if (sums === undefined) continue;
      objects += 1;
      for (const entry of sums.keys()) tags.add(entry.slice(entry.indexOf('|') + 1));
    }
    const { items: stoppedBefore } = await table.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': STOPPED.pk },
    });
    for (const item of stoppedBefore) tags.add(String(item.sk));
    const month = monthOf(now);
    const outcomes = await Promise.all([...tags].map((tag) => this.enforce(tag, month)));
    return {
      objects,
      owners: tags.size,
      stopped: outcomes.filter((outcome) => outcome === 'stopped').length,
      resumed: outcomes.filter((outcome) => outcome === 'resumed').length,
    };
  }

  /** Adds one log object's bytes, claimed in the same transactions; undefined when another run had it. */
  async count(key: string, text: string): Promise<Map<string, ServedSum> | undefined> {
    const sums = [...bytesPerOwnerMonth(text)];
    const parts = Math.max(1, Math.ceil(sums.length / TAGS_PER_WRITE));
    for (let part = 0; part < parts; part++) {
      const adds = sums
        .slice(part * TAGS_PER_WRITE, (part + 1) * TAGS_PER_WRITE)
        .map(([entry, { bytes, path }]) => {
          const [month, tag] = entry.split('|') as [string, string];
          return {
            Update: {
              Key: bandwidthKey(tag, month),
              UpdateExpression: 'ADD #bytes :bytes SET #sample = :sample',
              ExpressionAttributeNames: { '#bytes': 'bytes', '#sample': 'sample' },
              ExpressionAttributeValues: { ':bytes': bytes, ':sample': path },
            },
          };
        });
      // The claim outlives the listing's window, then goes: an object older than that is never listed again.
      const expires = epochSeconds(this.deps.table.clock()) + (LOOKBACK_MS * 2) / 1000;
      const claim = {
        Put: {
          Item: { ...claimKey(key, part), [TABLE.ttlAttribute]: expires },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
      const written = await this.deps.table
        .transact([claim, ...adds])
        .then(() => true, conditionFailedReturns(false));
      if (!written && part === 0) return undefined;
    }
    return new Map(sums);
  }

  private async enforce(tag: string, month: string): Promise<'stopped' | 'resumed' | undefined> {
    const { table, usage, gracePercent } = this.deps;
    const [item, listed] = await Promise.all([
      table.get(bandwidthKey(tag, month)),
      table.get({ ...STOPPED, sk: tag }),
    ]);
    if (!item && !listed) return undefined;
    const ownerId = (listed?.owner_id as string | undefined) ?? (await this.ownerOf(tag, month, item));
    const account = ownerId === undefined ? undefined : await this.deps.accounts.get(ownerId);
    if (!account) return undefined;
    const used = typeof item?.bytes === 'number' ? item.bytes : 0;
    const cap = await usage.capOf(account);
    if (cap !== null && used >= cap * 0.8) await this.notify(tag, month, account, used, cap, 80);
    if (cap !== null && used >= cap) await this.notify(tag, month, account, used, cap, 100);
    const over = cap !== null && used > cap * (1 + gracePercent / 100);
    if (over && !listed) {
      await this.deps.ownerRules.setStopped(account.id, 'bandwidth');
      await table.put({ ...STOPPED, sk: tag, owner_id: account.id });
      return 'stopped';
    }
    if (!over && listed) {
      await this.deps.ownerRules.setStopped(account.id, undefined);
      await table.delete({ ...STOPPED, sk: tag });
      return 'resumed';
    }
    return undefined;
  }

  /** The owner of a tag: kept on the month's item, else read from the file record its sample key names. */
  private async ownerOf(tag: string, month: string, item: Record<string, unknown> | undefined) {
    if (typeof item?.owner_id === 'string') return item.owner_id;
    const parsed = typeof item?.sample === 'string' ? parseStorageKey(item.sample.slice(3)) : undefined;
    const record = parsed && (await this.deps.table.get(fileKey(parsed.id)));
    if (typeof record?.owner_id !== 'string') return undefined;
    await this.deps.table.update(bandwidthKey(tag, month), {
      UpdateExpression: 'SET owner_id = :owner',
      ExpressionAttributeValues: { ':owner': record.owner_id },
    });
    return record.owner_id;
  }

  /** One notice per owner, month and threshold: the mark is written first, so a retry never mails twice. */
  private async notify(
    tag: string,
    month: string,
    account: { email?: string | null },
    used: number,
    cap: number,
    percent: 80 | 100,
  ): Promise<void> {
    const marked = await this.deps.table
      .update(bandwidthKey(tag, month), {
        UpdateExpression: 'SET #mark = :now',
        ConditionExpression: 'attribute_not_exists(#mark)',
        ExpressionAttributeNames: { '#mark': `notice_${percent}` },
        ExpressionAttributeValues: { ':now': this.deps.table.clock().toISOString() },
      })
      .then(() => true, conditionFailedReturns(false));
    if (marked && account.email) {
      await this.deps.mailer.send(
        bandwidthNoticeMail(account.email, { percent, used, cap, gracePercent: this.deps.gracePercent }),
      );
    }
  }
}
