// `npm run import -- <folder>` (docs/COMPAT.md "Importing a library"): a peer's library brought in through
// the upload service, owners matched by e-mail (or created without a password, to be set by a reset),
// albums created once, files stored with their album. Idempotent: each album and file leaves a marker item
// keyed by its source id (a file's also by its bytes' hash), and a second run finds them and skips.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hashPassword } from '#lib/accounts/passwords.ts';
import type { AccountRepository } from '#lib/accounts/repository.ts';
import { AppError } from '#lib/core/errors.ts';
import type { DirectUploadService } from '#lib/files/direct-upload.ts';
import { sanitizeOriginalName } from '#lib/files/names.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { Library } from './libraries.ts';

export interface LibraryImportDeps {
  table: Table;
  accounts: Pick<AccountRepository, 'ownerOf' | 'create'>;
  albums: { create(ownerId: string, input: { name: string; description: string }): Promise<{ id: string }> };
  uploads: Pick<DirectUploadService, 'store'>;
  /** One progress line. */
  log: (line: string) => void;
}

export interface ImportSummary {
  accounts: { matched: number; created: number };
  albums: { created: number; skipped: number };
  files: { imported: number; skipped: number; failed: number };
}

type Marker = { pk: string; sk: string; target_id: string };
const markerKey = (pk: string) => ({ pk, sk: 'import' });

/** A user name as the house's usernames go (3 to 32 of letters, digits, `_`, `.`, `-`). */
function usernameFrom(name: string, email: string, attempt: number): string {
  const base = (/^[A-Za-z0-9_.-]{3,}$/.test(name) ? name : (email.split('@')[0] ?? '')).replace(
    /[^A-Za-z0-9_.-]/g,
    '',
  );
  const suffix = attempt === 0 ? '' : `-${attempt + 1}`;
  return `${base.padEnd(3, '_').slice(0, 32 - suffix.length)}${suffix}`;
}

export class LibraryImporter {
  constructor(private readonly deps: LibraryImportDeps) {}

  async run(library: Library): Promise<ImportSummary> {
    const summary: ImportSummary = {
      accounts: { matched: 0, created: 0 },
      albums: { created: 0, skipped: 0 },
      files: { imported: 0, skipped: 0, failed: 0 },
    };
    const owners = new Map<string, string>();
    for (const user of library.users) {
      if (!user.email) continue;
      const existing = await this.deps.accounts.ownerOf(user.email);
      owners.set(user.sourceId, existing ?? (await this.createAccount(user)));
      summary.accounts[existing ? 'matched' : 'created']++;
    }
    const albums = new Map<string, string>();
    for (const album of library.albums) {
      const owner = owners.get(album.ownerId);
      if (!owner) continue;
      const pk = `import#${library.kind}#album#${owner}#${album.sourceId}`;
      const known = await this.deps.table.get<Marker>(markerKey(pk));
      if (known) {
        albums.set(album.sourceId, known.target_id);
        summary.albums.skipped++;
        continue;
      }
      const created = await this.deps.albums.create(owner, {
        name: album.name.slice(0, 100) || `Album ${album.sourceId}`,
        description: album.description.slice(0, 1000),
      });
      await this.deps.table.put({ ...markerKey(pk), target_id: created.id });
      albums.set(album.sourceId, created.id);
      summary.albums.created++;
    }
    let index = 0;
    for (const image of library.images) {
      const at = `[${++index}/${library.images.length}] ${library.kind} image ${image.sourceId}`;
      try {
        const owner = image.ownerId === null ? undefined : owners.get(image.ownerId);
        if (!owner) throw new Error('its owner has no e-mail in the export (a guest upload?)');
        const bytes = await readFile(image.file);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const pk = `import#${library.kind}#image#${image.sourceId}#${sha256}`;
        if (await this.deps.table.get(markerKey(pk))) {
          summary.files.skipped++;
          this.deps.log(`${at}: skipped (imported before)`);
          continue;
        }
        const albumId = image.albumId === null ? undefined : albums.get(image.albumId);
        const record = await this.deps.uploads.store(
          { id: owner, role: 'user' },
          {
            file: {
              bytes,
              sha256,
              size: bytes.length,
              originalName: sanitizeOriginalName(image.originalName),
              clientMimeType: '',
            },
            fields: { permission: image.permission, ...(albumId ? { album_id: albumId } : {}) },
          },
          { imported: true },
        );
        await this.deps.table.put({ ...markerKey(pk), target_id: record.id });
        summary.files.imported++;
        this.deps.log(`${at}: imported as ${record.url}`);
      } catch (error) {
        summary.files.failed++;
        const reason = error instanceof AppError || error instanceof Error ? error.message : String(error);
        this.deps.log(`${at}: failed: ${reason}`);
      }
    }
    return summary;
  }

  /** An account for the e-mail, with no password anyone knows (its owner sets one by a reset). */
  private async createAccount(user: Library['users'][number]): Promise<string> {
    const passwordHash = await hashPassword(randomBytes(24).toString('base64url'));
    for (let attempt = 0; ; attempt++) {
      try {
        const input = { email: user.email, emailVerified: true, role: 'user' as const, passwordHash };
        const account = await this.deps.accounts.create({
          ...input,
          username: usernameFrom(user.name, user.email, attempt),
          passwordUnset: true,
        });
        this.deps.log(
          `account ${account.username} created for ${user.email} (password to be set by a reset)`,
        );
        return account.id;
      } catch (error) {
        const taken = error instanceof AppError && /^username:/.test(error.message);
        if (!taken || attempt >= 20) throw error;
      }
    }
  }
}
