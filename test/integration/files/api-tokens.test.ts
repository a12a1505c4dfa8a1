// API tokens against DynamoDB Local: created with the secret shown once and only its hash stored, listed,
// revoked (then refused), owner-scoped, accepted on uploader routes only, last_used_at once a minute.
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken, tokenHashKey } from '#lib/accounts/api-tokens.ts';
import { buildSessions } from '#lib/accounts/build-sessions.ts';
import type { UploadRecord } from '#lib/files/record.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { config } from '#lib/platform/config/index.ts';
import { Table } from '#lib/platform/db/table.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { sharedMasterKey } from '#test/support/deps.ts';
import { makePng } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, callUpload, uniquePng, uploadInput } from './helpers.ts';

interface Created {
  id: string;
  name: string;
  token: string;
  prefix: string;
  created_at: string;
}

let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [alice, bob] = await Promise.all([createTestAccount(), createTestAccount()]);
});

async function createToken(account: TestAccount, name = 'picgo') {
  return callUpload<Created>({
    method: 'POST',
    path: '/api/v1/tokens',
    body: { name },
    headers: account.headers,
  });
}

describe('POST /api/v1/tokens', () => {
  it('answers 201 with the secret once, and stores only its SHA-256', async () => {
    const { status, body } = await createToken(alice, ' laptop ');

    expect(status).toBe(201);
    expect(body.code).toBe(0);
    const created = body.data;
    expect(Object.keys(created).sort()).toEqual(['created_at', 'id', 'name', 'prefix', 'token']);
    expect(created.name).toBe('laptop');
    expect(created.token).toMatch(/^ut_[A-Za-z0-9_-]{43}$/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    expect(created.prefix).toHaveLength(8);
    expect(created.created_at).toMatch(/\+00:00$/);
    const { Items = [] } = await dynamoClient(config.aws).send(
      new ScanCommand({ TableName: config.table_name }),
    );
    const everything = JSON.stringify(Items);
    expect(everything).not.toContain(created.token);
    expect(everything).toContain(hashApiToken(created.token));
  });

  it('refuses a missing or over-long name with 400, an API token as the credential with 401', async () => {
    const { token } = (await createToken(alice)).body.data;
    const empty = await callUpload({
      method: 'POST',
      path: '/api/v1/tokens',
      body: { name: '  ' },
      headers: alice.headers,
    });
    const long = await callUpload({
      method: 'POST',
      path: '/api/v1/tokens',
      body: { name: 'x'.repeat(65) },
      headers: alice.headers,
    });
    const byToken = await callUpload({
      method: 'POST',
      path: '/api/v1/tokens',
      body: { name: 'n' },
      headers: bearer(token),
    });

    expect([empty.status, long.status, byToken.status]).toEqual([400, 400, 401]);
  });
});

describe('GET /api/v1/tokens', () => {
  it('lists the caller’s tokens newest first, without secrets', async () => {
    const owner = await createTestAccount();
    const first = (await createToken(owner, 'one')).body.data;
    const second = (await createToken(owner, 'two')).body.data;
    await createToken(bob, 'not mine');

    const { status, body } = await callUpload<Array<Record<string, unknown>>>({
      path: '/api/v1/tokens',
      headers: owner.headers,
    });

    expect(status).toBe(200);
    expect(body.data).toEqual([
      {
        id: second.id,
        name: 'two',
        prefix: second.prefix,
        last_used_at: null,
        created_at: second.created_at,
      },
      { id: first.id, name: 'one', prefix: first.prefix, last_used_at: null, created_at: first.created_at },
    ]);
  });
});

describe('using and revoking a token', () => {
  it('authenticates uploads, files and presign as its owner; after revocation it is 401', async () => {
    // Prepare
    const { id, token } = (await createToken(alice)).body.data;
    const { bytes } = uniquePng(makePng);

    // Act
    const uploaded = await callUpload<UploadRecord>(uploadInput(bearer(token), { bytes }));
    const listed = await callUpload<{ items: UploadRecord[] }>({
      path: '/api/v1/files',
      headers: bearer(token),
    });
    const presigned = await callUpload({
      method: 'POST',
      path: '/api/v1/upload/presign',
      body: { mime_type: 'image/png', size: 5 },
      headers: bearer(token),
    });
    const revoked = await callUpload({
      method: 'DELETE',
      path: `/api/v1/tokens/${id}`,
      headers: alice.headers,
    });
    const after = await callUpload(uploadInput(bearer(token), { bytes: uniquePng(makePng).bytes }));
    const listedAfter = await callUpload<unknown[]>({ path: '/api/v1/tokens', headers: alice.headers });

    // Assess
    expect(uploaded.status).toBe(200);
    expect(listed.body.data.items.map((item) => item.id)).toContain(uploaded.body.data.id);
    expect(presigned.status).toBe(200);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ id, revoked: true });
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('API token is invalid or revoked');
    expect(JSON.stringify(listedAfter.body.data)).not.toContain(id);
  });

  it('cannot be revoked by someone else (404), nor twice', async () => {
    const { id, token } = (await createToken(alice)).body.data;
    const byBob = await callUpload({ method: 'DELETE', path: `/api/v1/tokens/${id}`, headers: bob.headers });
    const unknown = await callUpload({
      method: 'DELETE',
      path: '/api/v1/tokens/nope',
      headers: alice.headers,
    });
    const stillWorks = await callUpload({ path: '/api/v1/files', headers: bearer(token) });
    const once = await callUpload({ method: 'DELETE', path: `/api/v1/tokens/${id}`, headers: alice.headers });
    const twice = await callUpload({
      method: 'DELETE',
      path: `/api/v1/tokens/${id}`,
      headers: alice.headers,
    });

    expect([byBob.status, unknown.status, stillWorks.status, once.status, twice.status]).toEqual([
      404, 404, 200, 200, 404,
    ]);
  });

  it('is refused on session-only routes and is no session elsewhere', async () => {
    const { token } = (await createToken(alice)).body.data;
    const refused = await callUpload({ path: '/api/v1/tokens', headers: bearer(token) });
    expect(refused.status).toBe(401);
    // It says the credential is of the wrong kind, not that a session is invalid.
    expect(refused.body.message).toBe(
      'This route takes a session (log in); API tokens are accepted on the upload and file routes only',
    );
  });
});

describe('last_used_at', () => {
  it('moves at most once a minute, also under 10 concurrent uses', async () => {
    // Prepare: a service on a clock the test moves, over a table client that counts successful updates.
    let now = new Date('2030-01-01T00:00:00Z');
    let updates = 0;
    const client = dynamoClient(config.aws);
    const counting = {
      send: async (command: { constructor: { name: string } }) => {
        const result = await client.send(command as never);
        // A use is recorded on both of the token's items in one transaction.
        if (command.constructor.name === 'TransactWriteCommand') updates += 1;
        return result;
      },
    };
    const clocked = new Table(counting as never, config.table_name, () => now);
    const shards = config.listing_shards;
    const service = buildSessions({
      table: clocked,
      masterKey: sharedMasterKey(),
      ttlHours: 1,
      listingShards: shards,
    }).apiTokens;
    const { token } = await service.create(alice.account.id, 'clocked');
    updates = 0;
    const lastUsed = async () =>
      (
        await client.send(
          new GetCommand({ TableName: config.table_name, Key: tokenHashKey(hashApiToken(token)) }),
        )
      ).Item?.last_used_at;

    // Act + Assess
    await Promise.all(Array.from({ length: 10 }, () => service.verify(token)));
    expect(updates).toBe(1);
    expect(await lastUsed()).toBe('2030-01-01T00:00:00+00:00');

    now = new Date('2030-01-01T00:00:59Z');
    await Promise.all(Array.from({ length: 10 }, () => service.verify(token)));
    expect(updates).toBe(1);
    expect(await lastUsed()).toBe('2030-01-01T00:00:00+00:00');

    now = new Date('2030-01-01T00:01:00Z');
    await Promise.all(Array.from({ length: 10 }, () => service.verify(token)));
    expect(updates).toBe(2);
    expect(await lastUsed()).toBe('2030-01-01T00:01:00+00:00');

    const listed = await service.list(alice.account.id);
    expect(listed.find((item) => item.name === 'clocked')?.last_used_at).toBe('2030-01-01T00:01:00+00:00');
  });
});
