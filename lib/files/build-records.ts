// Builds the file records, the albums and the share grants alone, for functions that need them without the
// upload pipeline (the moderation worker; the shares function; the account-lifecycle worker).
import { sealedKey } from '#lib/accounts/sealed-key.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { AlbumFiles } from './album-files.ts';
import { AlbumService } from './albums.ts';
import { FileRepository, type FileRepositoryDeps } from './files.ts';
import { ShareGrants } from './share-grants.ts';

export function buildFileRepository(input: FileRepositoryDeps): FileRepository {
  return new FileRepository(input);
}

/** The share-scoped image links' grants, under the key kept in the table and sealed by the master key. */
export function buildShareGrants(table: Table, masterKey: () => Promise<MasterKey>): ShareGrants {
  return new ShareGrants({ key: sealedKey(table, masterKey, 'share-grant-key'), clock: table.clock });
}

/** The albums over these file records: their membership items, the table's clock. */
export function buildAlbums(table: Table, files: FileRepository, baseUrl: string): AlbumService {
  return new AlbumService({ table, files, members: new AlbumFiles({ table }), clock: table.clock, baseUrl });
}
