// What the storage stand-in lets a login cost, whatever our code does: the DynamoDB calls of a login in
// the shapes it could take, with argon2id where the real login has it and none of our code around them,
// each timed side by side with the benchmark's login baseline (argon2 verify + one GetItem). A shape whose
// ratio is above the goal cannot meet it however thin the handler is. Never part of npm test.
// Run: `npx tsx test/perf/login-floor.ts` (BENCH_LOGIN_ITERATIONS, default 60; BENCH_ROUNDS, default 3).
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { startDynamoLocal } from '#infra/local/dynamodb-local.ts';
import { hashPassword, verifyPassword } from '#lib/accounts/passwords.ts';
import { createTableInput } from '#lib/platform/db/keys.ts';
import { median, paired, round, table } from './stats.ts';

const TABLE = 'login-floor';
const PASSWORD = 'correct horse battery staple';

/** Item sizes close to the real ones (an account with its hash, a session, a security event). */
const padding = (bytes: number) => 'x'.repeat(bytes);

export interface LoginFloorShape {
  name: string;
  /** The waits, in order; each is the calls sent together. */
  waits: string;
  ratio: number;
  round_ratios: number[];
  p50_ms: number;
}

export async function measureLoginFloor(
  options: { iterations?: number; rounds?: number } = {},
): Promise<{ baseline_p50_ms: number; shapes: LoginFloorShape[] }> {
  const iterations = options.iterations ?? 60;
  const rounds = options.rounds ?? 3;
  const dynamo = await startDynamoLocal();
  try {
    const raw = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await raw.send(new CreateTableCommand(createTableInput(TABLE)));
    const db = DynamoDBDocumentClient.from(raw);
    const hash = await hashPassword(PASSWORD);
    const account = { pk: 'account#a', sk: 'account', status: 'active', password_hash: hash, role: 'user' };
    await db.send(new PutCommand({ TableName: TABLE, Item: { ...account, profile: padding(300) } }));
    await db.send(
      new PutCommand({
        TableName: TABLE,
        Item: { pk: 'ident#username#alice', sk: 'ident', account_id: 'a', password_hash: hash },
      }),
    );

    const get = (pk: string, sk: string) => db.send(new GetCommand({ TableName: TABLE, Key: { pk, sk } }));
    // A conditional counter on an item of its own, as the per-address limit and the guessing guard are.
    const counter = (pk: string) =>
      db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { pk, sk: 'counter' },
          UpdateExpression: 'ADD hits :one',
          ConditionExpression: 'attribute_not_exists(hits) OR hits < :max',
          ExpressionAttributeValues: { ':one': 1, ':max': 1_000_000 },
        }),
      );
    // The guard's slot taken on the claim item itself, which returns the claim (one call for both).
    const slotOnClaim = () =>
      db.send(
        new UpdateCommand({
          TableName: TABLE,
          Key: { pk: 'ident#username#alice', sk: 'ident' },
          UpdateExpression: 'ADD guard_failures :one',
          ConditionExpression: 'attribute_exists(account_id)',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
    const session = () => ({
      pk: `session#${randomUUID()}`,
      sk: 'session',
      account_id: 'a',
      pad: padding(250),
    });
    const event = () => ({ pk: 'account#a', sk: `event#${randomUUID()}`, type: 'login', pad: padding(150) });
    const batchWrite = (items: Array<Record<string, unknown>>, deletes: Array<Record<string, string>>) =>
      db.send(
        new BatchWriteCommand({
          RequestItems: {
            [TABLE]: [
              ...items.map((Item) => ({ PutRequest: { Item } })),
              ...deletes.map((Key) => ({ DeleteRequest: { Key } })),
            ],
          },
        }),
      );
    const verify = async () => {
      if (!(await verifyPassword(hash, PASSWORD))) throw new Error('verify failed');
    };
    let address = 0;
    const ipKey = () => `throttle#ip#10.0.${(++address >> 8) & 255}.${address & 255}`;

    const shapes: Record<string, { waits: string; run: () => Promise<unknown> }> = {
      today: {
        waits:
          '[ip limit, claim read, guard slot] -> [argon2, account read] -> [batch: session, event, guard reset]',
        run: async () => {
          await Promise.all([counter(ipKey()), get('ident#username#alice', 'ident'), counter('guard#alice')]);
          await Promise.all([verify(), get('account#a', 'account')]);
          await batchWrite([session(), event()], [{ pk: 'guard#alice', sk: 'counter' }]);
        },
      },
      'no account read': {
        waits: '[ip limit, claim read, guard slot] -> [argon2] -> [batch: session, event, guard reset]',
        run: async () => {
          await Promise.all([counter(ipKey()), get('ident#username#alice', 'ident'), counter('guard#alice')]);
          await verify();
          await batchWrite([session(), event()], [{ pk: 'guard#alice', sk: 'counter' }]);
        },
      },
      'guard on the claim': {
        waits: '[ip limit, claim slot+read] -> [argon2] -> [batch: session, event]',
        run: async () => {
          await Promise.all([counter(ipKey()), slotOnClaim()]);
          await verify();
          // The reset would be one more call beside the batch (an update of the claim); left out here.
          await batchWrite([session(), event()], []);
        },
      },
      'transaction after': {
        waits:
          '[ip limit, claim read, guard slot] -> [argon2] -> [transaction: account check, session, event, guard]',
        run: async () => {
          await Promise.all([counter(ipKey()), get('ident#username#alice', 'ident'), counter('guard#alice')]);
          await verify();
          await db.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  ConditionCheck: {
                    TableName: TABLE,
                    Key: { pk: 'account#a', sk: 'account' },
                    ConditionExpression: '#status = :active AND password_hash = :hash',
                    ExpressionAttributeNames: { '#status': 'status' },
                    ExpressionAttributeValues: { ':active': 'active', ':hash': hash },
                  },
                },
                { Put: { TableName: TABLE, Item: session() } },
                { Put: { TableName: TABLE, Item: event() } },
                { Delete: { TableName: TABLE, Key: { pk: 'guard#alice', sk: 'counter' } } },
              ],
            }),
          );
        },
      },
      'one call each side': {
        waits: '[ip limit] -> [argon2] -> [session] (no guard, no event: below what docs/DESIGN.md allows)',
        run: async () => {
          await counter(ipKey());
          await verify();
          await db.send(new PutCommand({ TableName: TABLE, Item: session() }));
        },
      },
    };

    const baseline = async () => {
      await verify();
      await get('account#a', 'account');
    };
    const byShape = new Map<string, { ratios: number[]; p50: number[] }>();
    const baselineP50: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const names = Object.keys(shapes);
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        const result = await paired({
          iterations,
          warmup: 30,
          subject: shapes[name]!.run,
          baseline,
        });
        const entry = byShape.get(name) ?? { ratios: [], p50: [] };
        entry.ratios.push(round(result.ratio, 3));
        entry.p50.push(median(result.subject));
        byShape.set(name, entry);
        baselineP50.push(median(result.baseline));
      }
    }
    return {
      baseline_p50_ms: round(median(baselineP50)),
      shapes: Object.entries(shapes).map(([name, shape]) => {
        const entry = byShape.get(name)!;
        return {
          name,
          waits: shape.waits,
          ratio: round(median(entry.ratios), 3),
          round_ratios: entry.ratios,
          p50_ms: round(median(entry.p50)),
        };
      }),
    };
  } finally {
    await dynamo.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureLoginFloor({
    iterations: Number(process.env.BENCH_LOGIN_ITERATIONS ?? 60),
    rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  });
  console.log(`baseline (argon2 verify + GetItem) p50 ${result.baseline_p50_ms} ms\n`);
  console.log(
    table(
      ['shape', 'p50 ms', 'ratio', 'rounds', 'waits'],
      result.shapes.map((shape) => [
        shape.name,
        shape.p50_ms,
        shape.ratio,
        shape.round_ratios.join(' / '),
        shape.waits,
      ]),
    ),
  );
  console.log(`LOGIN_FLOOR ${JSON.stringify(result)}`);
}
