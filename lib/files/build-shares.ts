// Builds the share links' service (docs/DESIGN.md 16) from the table, the master key, settings and the
// accounts' password guard: what the function that serves shares needs of the files domain (records,
// albums, the grants of its image links), kept apart from buildFiles so that function does not bundle the
// upload pipeline.
import type { Accounts } from '#lib/accounts/build.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import { buildAlbums, buildShareGrants } from './build-records.ts';
import { FileRepository } from './files.ts';
import { ShareService } from './shares.ts';

export interface SharesInput {
  table: Table;
  /** Seals the key of the share-scoped image links, kept in the table. */
  masterKey: () => Promise<MasterKey>;
  /** `base_url`: share pages and file URLs. */
  baseUrl: string;
  /** `listing_shards` (file records carry their listing keys). */
  listingShards: number;
  /** Wrong share passwords back off as wrong account passwords do (lib/accounts/login-guard.ts). */
  accounts: Pick<Accounts, 'guard'>;
}

export function buildShares(input: SharesInput): ShareService {
  const { table, baseUrl } = input;
  const files = new FileRepository({ table, baseUrl, listingShards: input.listingShards });
  return new ShareService({
    table,
    files,
    albums: buildAlbums(table, files, baseUrl),
    guard: input.accounts.guard,
    grants: buildShareGrants(table, input.masterKey),
    clock: table.clock,
    baseUrl,
  });
}
