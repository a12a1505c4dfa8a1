// DELETE /api/v1/files/{id} and its back-office form: the record, its claim and its bytes in the usage,
// then the object, then the CDN's cached copy.
import { type Invalidator, noInvalidator } from '#lib/platform/cdn/invalidator.ts';
import { log } from '#lib/platform/log.ts';
import type { FileRepository } from './files.ts';
import type { FileStorage } from './storage.ts';

export interface FileDeletionDeps {
  files: FileRepository;
  storage: FileStorage;
  /** The CDN in front of /i/*, which may hold a deleted file's bytes for up to a year. */
  cdn?: Invalidator | undefined;
}

export class FileDeletionService {
  constructor(private readonly deps: FileDeletionDeps) {}

  /** A null owner is the back office: any file, same guarantees. */
  async delete(ownerId: string | null, id: string): Promise<{ id: string; deleted: true }> {
    const item = await this.deps.files.deleteOwn(ownerId, id);
    // The record is gone first, so a failure here leaves an unlisted object, never a record without bytes.
    await this.deps.storage.deleteQuietly(item.key);
    await this.invalidateQuietly(item.key);
    return { id: item.id, deleted: true };
  }

  /**
   * Takes `/i/<key>` out of the CDN's cache. The record and object are already gone, so a failure cannot
   * undo the delete: it is logged (the cached copy then lives until it expires) and the delete succeeds.
   */
  private async invalidateQuietly(key: string): Promise<void> {
    const path = `/i/${key}`;
    try {
      await (this.deps.cdn ?? noInvalidator).invalidate([path]);
    } catch (error) {
      log.warn('could not invalidate a deleted file in the CDN', {
        path,
        error_name: (error as { name?: string } | undefined)?.name,
      });
    }
  }
}
