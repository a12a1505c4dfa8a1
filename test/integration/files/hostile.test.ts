// Hostile input, upload and file routes (docs/UPLOADS.md), the meta group (/healthz, the `$default` 404)
// and the render group (/i/{key+} with and without a rendition query, docs/IMAGES.md): random bodies, broken multipart, lying content-length, hostile keys and ids, no caller, a
// user and an administrator. No 5xx, envelopes only, and rejected requests change nothing (hostile-fuzz.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as filesHandler } from '#functions/files/handler.ts';
import { handler as metaHandler } from '#functions/meta/handler.ts';
import { handler as renderHandler } from '#functions/render/handler.ts';
import { buildEvent } from '#infra/local/api-event.ts';
import { routesOf } from '#lib/http/routes.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { lambdaContext } from '#test/support/events.ts';
import {
  type BatchStats,
  bearerOf,
  callerCases,
  differences,
  encodeSegment,
  expectWellFormed,
  fieldsOf,
  fuzzRoute,
  hostileHeaders,
  hostileString,
  RUNS,
  SEED,
  snapshot,
} from '#test/support/hostile-fuzz.ts';
import { png } from '#test/support/images.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { bearer, callUpload, uploadInput } from './helpers.ts';

const FIELDS: Record<string, readonly string[]> = {
  'POST /api/v1/upload/presign': ['mime_type', 'size', 'filename', 'permission', 'album_id'],
  'POST /api/v1/upload/confirm': ['key'],
  'PATCH /api/v1/files/{id}': ['permission', 'album_id'],
  'POST /api/v1/tokens': ['name'],
  'GET /api/v1/files': ['limit', 'cursor', 'album_id'],
  // Albums (docs/DESIGN.md 16).
  'POST /api/v1/albums': ['name', 'description'],
  'PATCH /api/v1/albums/{id}': ['name', 'description'],
  'GET /api/v1/albums': ['limit', 'cursor'],
  'GET /api/v1/gallery': ['limit', 'cursor'],
  // Webhooks (docs/WEBHOOKS.md).
  'POST /api/v1/webhooks': ['url', 'events', 'enabled'],
  'PATCH /api/v1/webhooks/{id}': ['enabled'],
};

const ROUTES = [...routesOf('files'), ...routesOf('meta'), ...routesOf('render')];
const HANDLERS = { files: filesHandler, meta: metaHandler, render: renderHandler } as const;
const stats: BatchStats = { compared: [], skipped: [] };
let user: TestAccount;
let admin: TestAccount;

beforeAll(async () => {
  await provisionTestStack();
  [user, admin] = await Promise.all([createTestAccount(), createTestAccount({ role: 'admin' })]);
  // Something to find, list, overwrite or delete: one stored file of the user's.
  const stored = await callUpload(uploadInput(bearer(user.token), { bytes: png.bytes }));
  expect(stored.status).toBe(200);
});

afterAll(() => {
  expect(stats.skipped.filter((line) => line.includes(' as none'))).toEqual([]);
});

describe(`hostile input to every upload and file route (seed ${SEED})`, () => {
  const cases = callerCases(ROUTES);
  it.each(cases)(
    '%s as %s: no 5xx, envelopes only, no state change when rejected',
    async (_key, caller, route) => {
      const auth = bearerOf(caller, { user: () => user.token, admin: () => admin.token });
      const handler = HANDLERS[route.group as keyof typeof HANDLERS];
      await fuzzRoute({ route, caller, auth, fields: fieldsOf(route, FIELDS), handler, stats });
    },
  );

  it('answers a 404 envelope for any path no route matches, and stores nothing', async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE'),
        fc.array(hostileString, { maxLength: 4 }),
        hostileHeaders(fc.constant(undefined)),
        async (method, segments, headers) => {
          // (a leading `//` would make it a scheme-relative URL, which no request line carries)
          const path = `/x/${segments.map(encodeSegment).join('/')}`;
          const event = buildEvent({
            method,
            url: path,
            headers: { host: 'localhost', ...headers },
            body: Buffer.alloc(0),
            sourceIp: '203.0.113.9',
            routeKey: '$default',
          });
          const result = await filesHandler(event, lambdaContext);
          expectWellFormed({ method: 'GET', path, group: 'meta', auth: 'none', body: 'none' }, result);
        },
      ),
      { numRuns: RUNS * 2, seed: SEED, endOnFailure: true },
    );
    expect(differences(before, await snapshot())).toEqual([]);
  });

  it('compared the state around most batches', () => {
    expect(stats.compared.length).toBeGreaterThan(cases.length / 2);
  });
});
