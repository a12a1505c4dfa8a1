// Moving a table of the older key shape to the sharded listings (docs/DEPLOYMENT.md, "Moving to the sharded
// listings"): a table made the old way (indexes gsi1/gsi2 projecting everything, files under the constant
// partitions gallery#public and files#private, identifier claims in gsi1's `idents` with their login copy)
// is brought to the current indexes and item shape by the local provisioning, after which every listing
// reads it through the current code; the migration is idempotent, follows a change of listing_shards, and
// loses to a request that changed an item meanwhile.

import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeReport, ITEM_MIGRATIONS, migrateItems } from '#infra/migrate-items.ts';
import { buildAccountRecords } from '#lib/accounts/build-sessions.ts';
import { AdminFiles } from '#lib/files/admin-files.ts';
import { FileRepository, fileKey } from '#lib/files/files.ts';
import { fileListingShards } from '#lib/files/migrations.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { createTableInput } from '#lib/platform/db/keys.ts';
import type { ItemUpdate } from '#lib/platform/db/migration.ts';
import { ConditionFailedError, type Item, type Table } from '#lib/platform/db/table.ts';
import { testDeps } from '#test/support/deps.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const client = dynamoClient(config.aws);
const OWNER = randomUUID();
const FILES = 30;
const PEOPLE = ['Ada', 'adam', 'Bea'];

/** The table as it was made before: the same keys, indexes gsi1 and gsi2 projecting every attribute. */
function oldTableInput() {
  const input = createTableInput(config.table_name);
  input.GlobalSecondaryIndexes = [1, 2].map((n) => ({
    IndexName: `gsi${n}`,
    KeySchema: [
      { AttributeName: `gsi${n}pk`, KeyType: 'HASH' as const },
      { AttributeName: `gsi${n}sk`, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  }));
  // Only the attributes those keys use (DynamoDB refuses a definition no key uses).
  input.AttributeDefinitions = input.AttributeDefinitions?.filter(({ AttributeName }) =>
    ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].includes(String(AttributeName)),
  );
  return input;
}

/** A file record as it was written before: its listing a constant partition (or none, older still). */
function oldFile(index: number, listed: boolean): Item & { id: string } {
  const id = randomUUID();
  const permission = index % 3 === 0 ? 'private' : 'public';
  const sortKey = `${new Date(Date.UTC(2024, 0, 1, 0, 0, index)).toISOString()}#${id}`;
  return {
    ...fileKey(id),
    id,
    owner_id: OWNER,
    key: `2024/01/${id}.png`,
    filename: `${id}.png`,
    original_name: `old-${index}.png`,
    hash: `${index}`.padStart(64, '0'),
    permission,
    size: 100 + index,
    mime_type: 'image/png',
    width: 1,
    height: 1,
    created_at: '2024-01-01T00:00:00+00:00',
    gsi1pk: `files#${OWNER}`,
    gsi1sk: sortKey,
    ...(listed
      ? { gsi2pk: permission === 'public' ? 'gallery#public' : 'files#private', gsi2sk: sortKey }
      : {}),
  };
}

const oldFiles = Array.from({ length: FILES }, (_, index) => oldFile(index, index !== FILES - 1));
const people = PEOPLE.map((name) => ({
  id: randomUUID(),
  username: `${name}_${OWNER.slice(0, 6)}`,
  email: `${name.toLowerCase()}_${OWNER.slice(0, 6)}@example.test`,
}));

const OLD_TOKEN = { id: randomUUID(), hash: 'f'.repeat(64) };

let table: Table;

beforeAll(async () => {
  // Prepare: the old table and items of the old shape, written raw.
  await client.send(new CreateTableCommand(oldTableInput()));
  const put = (item: Item) => client.send(new PutCommand({ TableName: config.table_name, Item: item }));
  for (const file of oldFiles) await put(file);
  for (const person of people) {
    const now = new Date().toISOString();
    await put({
      pk: `account#${person.id}`,
      sk: 'account',
      id: person.id,
      username: person.username,
      email: person.email,
      email_verified: true,
      role: 'user',
      password_hash: '$argon2id$not-a-real-hash',
      status: 'active',
      session_epoch: 0,
      totp_enabled: false,
      ident_indexed: true,
      created_at: now,
      updated_at: now,
    });
    for (const [value, kind] of [
      [person.username, 'username'],
      [person.email, 'email'],
    ] as const) {
      await put({
        pk: `ident#${value.toLowerCase()}`,
        sk: 'ident',
        account_id: person.id,
        kind,
        username: person.username,
        password_hash: '$argon2id$not-a-real-hash',
        gsi1pk: 'idents',
        gsi1sk: value.toLowerCase(),
      });
    }
  }

  // An API token listed the old way: through its hash item, whose key (the secret's hash) the index held.
  const tokenCreated = '2024-01-02T00:00:00.000Z';
  await put({
    pk: `apitoken#${OLD_TOKEN.hash}`,
    sk: 'apitoken',
    id: OLD_TOKEN.id,
    account_id: people[0]!.id,
    name: 'old uploader',
    prefix: 'ut_abcde',
    created_at: '2024-01-02T00:00:00+00:00',
    last_used_at: '2024-01-03T00:00:00+00:00',
    gsi1pk: `apitokens#${people[0]!.id}`,
    gsi1sk: `${tokenCreated}#${OLD_TOKEN.id}`,
  });
  await put({
    pk: `apitokenid#${OLD_TOKEN.id}`,
    sk: 'apitokenid',
    account_id: people[0]!.id,
    token_hash: OLD_TOKEN.hash,
  });

  // Act: the local provisioning finds it.
  ({ table } = await provisionTestStack());
}, 120_000);

describe('a table made the old way, provisioned again', () => {
  it('has the current indexes, each projecting its listed attributes only', async () => {
    const { Table: described } = await client.send(
      new DescribeTableCommand({ TableName: config.table_name }),
    );
    const shape = (indexes: NonNullable<typeof described>['GlobalSecondaryIndexes']) =>
      (indexes ?? [])
        .map((index) => ({
          IndexName: index.IndexName,
          KeySchema: index.KeySchema,
          ProjectionType: index.Projection?.ProjectionType,
          NonKeyAttributes: [...(index.Projection?.NonKeyAttributes ?? [])].sort(),
        }))
        .sort((a, b) => String(a.IndexName).localeCompare(String(b.IndexName)));
    expect(shape(described?.GlobalSecondaryIndexes)).toEqual(
      shape(createTableInput(config.table_name).GlobalSecondaryIndexes),
    );
  });

  it('lists every old file: the gallery its public ones, the back office all of them, newest first', async () => {
    const { uploads } = testDeps();
    const newestFirst = [...oldFiles].sort((a, b) => String(b.gsi1sk).localeCompare(String(a.gsi1sk)));

    const gallery = await readAll((cursor) =>
      uploads.files.gallery({ limit: 7, ...(cursor ? { cursor } : {}) }),
    );
    const all = await readAll((cursor) => uploads.adminFiles.list({ limit: 7, cursor }));

    const galleryIds = gallery.map((item) => item.id);
    const publicIds = newestFirst.filter((file) => file.permission === 'public').map((file) => file.id);
    expect(galleryIds.filter((id) => publicIds.includes(id))).toEqual(publicIds);
    const allIds = all.map((item) => item.id);
    expect(allIds.filter((id) => newestFirst.some((file) => file.id === id))).toEqual(
      newestFirst.map((file) => file.id),
    );
  });

  it('finds the old accounts by prefix, and the listing index holds no login copy of a claim', async () => {
    const { accounts } = testDeps();
    const page = await accounts.admin.list({ q: 'ADA', limit: 10 });
    expect(page.items.map((item) => item.id).sort()).toEqual(
      people
        .filter((person) => person.username.toLowerCase().startsWith('ada'))
        .map((p) => p.id)
        .sort(),
    );

    const claim = await table.get(identifierKeyOf(people[2]!.username));
    expect(claim).not.toHaveProperty('gsi1pk');
    const { Items } = await client.send(
      new QueryCommand({
        TableName: config.table_name,
        IndexName: 'listing',
        KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk = :sk',
        ExpressionAttributeValues: { ':pk': claim!.gsi2pk, ':sk': claim!.gsi2sk },
      }),
    );
    expect(Items).toHaveLength(1);
    expect(Object.keys(Items![0]!).sort()).toEqual(['account_id', 'gsi2pk', 'gsi2sk', 'kind', 'pk', 'sk']);
  });

  it('lists an old API token by its id item, and no index holds the hash item', async () => {
    const { accounts } = testDeps();
    const owner = people[0]!.id;

    const listed = await accounts.apiTokens.list(owner);
    const { Items } = await client.send(
      new QueryCommand({
        TableName: config.table_name,
        IndexName: 'owner',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': `apitokens#${owner}` },
      }),
    );

    expect(listed).toEqual([
      {
        id: OLD_TOKEN.id,
        name: 'old uploader',
        prefix: 'ut_abcde',
        created_at: '2024-01-02T00:00:00+00:00',
        last_used_at: '2024-01-03T00:00:00+00:00',
      },
    ]);
    expect(Items?.map((item) => item.pk)).toEqual([`apitokenid#${OLD_TOKEN.id}`]);
    expect(JSON.stringify(Items)).not.toContain(OLD_TOKEN.hash);
  });

  it('has nothing left to do on a second run', async () => {
    const report = await migrateItems(table, { listingShards: config.listing_shards });

    expect(report.scanned).toBeGreaterThan(FILES);
    for (const migration of ITEM_MIGRATIONS) {
      expect(report.migrations[migration.name], migration.name).toEqual({ updated: 0, skipped: 0 });
    }
    expect(describeReport(report)[0]).toBe(`${report.scanned} item(s) scanned`);
  });
});

describe('a change of listing_shards', () => {
  it('moves every listed file to its shard of the new count, and back', async () => {
    const fewer = Math.max(1, Math.floor(config.listing_shards / 4));
    const files = new FileRepository({ table, baseUrl: config.base_url, listingShards: fewer });
    const { repository: accounts } = buildAccountRecords({ table, listingShards: fewer });
    const admin = new AdminFiles({ table, files, accounts });

    const moved = await migrateItems(table, { listingShards: fewer });
    const all = await readAll((cursor) => admin.list({ limit: 50, cursor }));

    expect(moved.migrations['files: listing shards']!.updated).toBeGreaterThan(0);
    expect(all.map((item) => item.id).filter((id) => oldFiles.some((file) => file.id === id))).toHaveLength(
      FILES,
    );
    await migrateItems(table, { listingShards: config.listing_shards });
    const again = await migrateItems(table, { listingShards: config.listing_shards });
    expect(again.migrations['files: listing shards']).toEqual({ updated: 0, skipped: 0 });
  });
});

describe('a request changing an item while it is migrated', () => {
  it('wins: the migration’s update of the item as scanned fails its condition', async () => {
    // Prepare: an old-shape public file, as the scan read it.
    const file = oldFile(1, true);
    await client.send(
      new PutCommand({ TableName: config.table_name, Item: { ...file, permission: 'public' } }),
    );
    const scanned = (await table.get(fileKey(file.id)))!;
    const update = fileListingShards.plan(scanned, { listingShards: config.listing_shards }) as ItemUpdate;
    const { uploads } = testDeps();

    // Act: the owner makes it private before the migration's update lands.
    await uploads.files.setPermission(OWNER, file.id, 'private');
    const { Key, ...rest } = update;
    const outcome = await table.update(Key, rest).catch((error: unknown) => error);

    // Assess
    expect(outcome).toBeInstanceOf(ConditionFailedError);
    const stored = await table.get(fileKey(file.id));
    expect(stored).toMatchObject({
      permission: 'private',
      gsi2pk: expect.stringMatching(/^files#private#\d+$/),
    });
  });
});

const identifierKeyOf = (value: string) => ({ pk: `ident#${value.toLowerCase()}`, sk: 'ident' });

async function readAll<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages += 1) {
    const answer = await page(cursor);
    items.push(...answer.items);
    if (!answer.next_cursor) return items;
    cursor = answer.next_cursor;
  }
  throw new Error('more than 100 pages');
}
