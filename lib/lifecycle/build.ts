// Builds the account's lifecycle (docs/ACCOUNTS.md "Export", "Deleting an account"): the export routes'
// service (files group) and the lifecycle worker over the repositories whose deletion code it reuses.

import { ApiTokenService } from '#lib/accounts/api-tokens.ts';
import { buildAccountRecords } from '#lib/accounts/build-sessions.ts';
import { PasskeyStore } from '#lib/accounts/passkey-store.ts';
import { sealedKey } from '#lib/accounts/sealed-key.ts';
import { OrderRepository } from '#lib/billing/orders.ts';
import { buildAlbums } from '#lib/files/build-records.ts';
import { FileDeletionService } from '#lib/files/file-deletion.ts';
import { FileRepository } from '#lib/files/files.ts';
import { buildTakedowns } from '#lib/platform/cdn/build-takedowns.ts';
import type { MasterKey } from '#lib/platform/crypto/master-key.ts';
import type { Table } from '#lib/platform/db/table.ts';
import type { Mailer } from '#lib/platform/mail/mailer.ts';
import type { FileStorage } from '#lib/platform/storage/s3.ts';
import { ExportBuilder } from './export-builder.ts';
import { AccountExports, ExportLinks } from './exports.ts';
import { AccountPurge } from './purge.ts';
import { LifecycleWorker } from './worker.ts';

export interface LifecycleInput {
  table: Table;
  storage: FileStorage;
  masterKey: () => Promise<MasterKey>;
  /** `base_url`: the mailed links point there. */
  baseUrl: string;
  listingShards: number;
}

/** The mailed links' key: sealed by the master key, the same in every group that signs or checks. */
function exportLinks(input: LifecycleInput): ExportLinks {
  const { table, masterKey, baseUrl } = input;
  return new ExportLinks({ key: sealedKey(table, masterKey, 'export-link'), baseUrl, clock: table.clock });
}

export function buildAccountExports(input: LifecycleInput): AccountExports {
  const { table, storage, listingShards } = input;
  return new AccountExports({ table, storage, links: exportLinks(input), listingShards });
}

export function buildLifecycleWorker(input: LifecycleInput & { mailer: Mailer; cdnMaxAgeSeconds: number }) {
  const { table, storage, listingShards, baseUrl } = input;
  const { repository: accounts, securityEvents: events } = buildAccountRecords({ table, listingShards });
  const files = new FileRepository({ table, baseUrl, listingShards });
  const orders = new OrderRepository({ table, listingShards });
  const takedowns = buildTakedowns({
    table,
    shards: listingShards,
    edgeMaxAgeSeconds: input.cdnMaxAgeSeconds,
  });
  const builder = new ExportBuilder({
    table,
    storage,
    accounts,
    files,
    albums: buildAlbums(table, files, baseUrl),
    orders,
    events,
    mailer: input.mailer,
    links: exportLinks(input),
  });
  const deletions = new FileDeletionService({ files, storage, takedowns });
  const purge = new AccountPurge({
    table,
    accounts,
    files,
    deletions,
    orders,
    apiTokens: new ApiTokenService({ table, accounts, events }),
    passkeys: new PasskeyStore({ table }),
  });
  return new LifecycleWorker({ table, listingShards, builder, purge, files: deletions });
}
