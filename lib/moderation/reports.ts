// Reports from anyone (docs/MODERATION.md "Reports"): `POST /api/v1/reports {url, reason, note?}` names a
// file by any link the service gives out (its `/i/<key>`, a file share's page `/s/<id>`, or a share's image
// link `/s/<id>/i/<grant>`); the report is kept with the file and puts it in the queue, in one transaction.
// Each address may report at `moderation.report_rate`; the route checks proof of work first, where required.
import type { RateLimit, Throttle } from '#lib/accounts/throttle.ts';
import { errors } from '#lib/core/errors.ts';
import type { FileItem, FileRepository } from '#lib/files/files.ts';
import { parseStorageKey } from '#lib/files/names.ts';
import type { ShareGrants } from '#lib/files/share-grants.ts';
import { shareKey } from '#lib/files/shares.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { ModerationQueue, ReportReason } from './queue.ts';

export interface ReportInput {
  url: string;
  reason: ReportReason;
  note?: string | undefined;
}

export interface ReportsDeps {
  table: Table;
  files: Pick<FileRepository, 'getItem'>;
  grants: Pick<ShareGrants, 'read'>;
  queue: ModerationQueue;
  throttle: Throttle;
  /** `moderation.report_rate`, per address. */
  rate: RateLimit;
}

const NAMES_NO_FILE = 'url: names no file of this service';

export class Reports {
  constructor(private readonly deps: ReportsDeps) {}

  /** Keeps the report and queues its file; 404 when the link names no file (any more). */
  async report(input: ReportInput, address: string): Promise<{ received: true }> {
    await this.deps.throttle.consume(
      `report#${address}`,
      this.deps.rate,
      'Too many reports; try again later',
    );
    const file = await this.fileOf(input.url);
    await this.deps.table.transact([
      this.deps.queue.report(file.id, input.reason, input.note),
      this.deps.queue.enqueue(file, 1),
    ]);
    return { received: true };
  }

  private async fileOf(url: string): Promise<FileItem> {
    const path = pathOf(url);
    const image = /^\/i\/(.+)$/.exec(path);
    const share = /^\/s\/([A-Za-z0-9_-]{32})(?:\/i\/([A-Za-z0-9_-]{64}))?\/?$/.exec(path);
    let fileId: string | undefined;
    if (image) {
      const key = decoded(image[1]!);
      fileId = parseStorageKey(key)?.id;
      const file = fileId === undefined ? undefined : await this.deps.files.getItem(fileId);
      if (file?.key === key) return file;
    } else if (share?.[2] !== undefined) {
      fileId = (await this.deps.grants.read(share[1]!, share[2]))?.fileId;
    } else if (share) {
      const shared = await this.deps.table.get(shareKey(share[1]!), { consistent: false });
      if (shared?.album_id !== undefined)
        throw errors.badRequest("url: names an album's share; report one of its images by its link");
      fileId = shared?.file_id as string | undefined;
    } else {
      throw errors.badRequest('url: must be a link to an image (/i/...) or a share (/s/...) of this service');
    }
    const file = image || fileId === undefined ? undefined : await this.deps.files.getItem(fileId);
    if (!file) throw errors.notFound(NAMES_NO_FILE);
    return file;
  }
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw errors.badRequest('url: is not a well-formed link');
  }
}

/** The path of an absolute http(s) URL or of a path; a 400 for anything else. */
function pathOf(url: string): string {
  try {
    const parsed = new URL(url, 'http://service.invalid');
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return parsed.pathname;
  } catch {
    throw errors.badRequest('url: must be a link of this service');
  }
}
