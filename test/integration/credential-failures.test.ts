// A credential check that fails for a reason other than a bad credential is a logged 5xx, never a 401
// (docs/DESIGN.md 9), and a group reaches nothing its needs do not declare. Regression for the files function
// that had no master key in AWS and answered every session route "Session is invalid or expired".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFilesDeps } from '#functions/files/deps.ts';
import { createFilesHandler } from '#functions/files/handler.ts';
import { needs as filesNeeds } from '#functions/files/needs.ts';
import { config } from '#lib/platform/config/index.ts';
import { cachedMasterKey, type MasterKey } from '#lib/platform/crypto/index.ts';
import { masterKeyOf } from '#lib/wiring/master-key.ts';
import { groupResources, MissingNeedError } from '#lib/wiring/resources.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { sharedMasterKey } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { captureLog } from '#test/support/mail.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let alice: TestAccount;
let log: ReturnType<typeof captureLog>;
beforeAll(async () => {
  await provisionTestStack();
  alice = await createTestAccount();
  log = captureLog();
});
afterAll(() => log.stop());

/** The files group as a fresh container whose master key opens with `open`. */
function uploadContainer(open: () => Promise<MasterKey>) {
  const deps = buildFilesDeps(
    testResources('files', filesNeeds, { provided: { masterKey: cachedMasterKey(open) } }),
  );
  return createFilesHandler(() => deps, { maxUploadBytes: config.upload.max_bytes });
}

async function listTokens(handler: ReturnType<typeof createFilesHandler>) {
  const result = await handler(
    apiEvent({ method: 'GET', path: '/api/v1/tokens', headers: alice.headers }),
    lambdaContext,
  );
  return { status: result.statusCode, body: parseBody(result) as { code: number; message: string } };
}

describe('a credential check that cannot be made', () => {
  it('answers 503 with Retry-After semantics, not 401, when the master key cannot be opened, and logs why', async () => {
    // Prepare: the key file cannot be created, as in a read-only Lambda code folder.
    const handler = uploadContainer(() =>
      Promise.reject(
        Object.assign(new Error("EROFS: read-only file system, mkdir '.data'"), { code: 'EROFS' }),
      ),
    );

    // Act
    const answer = await listTokens(handler);

    // Assess
    expect(answer.status).toBe(503);
    expect(answer.body.message).toBe('Credentials cannot be checked right now; try again shortly');
    expect(answer.body.message).not.toContain('EROFS');
    const logged = log.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(JSON.stringify(logged.filter((line) => line.level === 'error'))).toContain('EROFS');
  });

  it('tries the master key again on the next request instead of failing for the container’s life', async () => {
    let attempts = 0;
    const handler = uploadContainer(async () => {
      attempts += 1;
      if (attempts === 1) throw Object.assign(new Error('KMS unreachable'), { name: 'TimeoutError' });
      return sharedMasterKey()();
    });

    const first = await listTokens(handler);
    const second = await listTokens(handler);

    expect(first.status).toBe(503);
    expect(second.status).toBe(200);
    expect(attempts).toBe(2);
  });

  it('still answers 401 for a token that is really bad', async () => {
    const handler = uploadContainer(sharedMasterKey());
    const result = await handler(
      apiEvent({
        method: 'GET',
        path: '/api/v1/tokens',
        headers: { authorization: `Bearer ${alice.token}x` },
      }),
      lambdaContext,
    );
    expect(result.statusCode).toBe(401);
  });
});

describe('needs', () => {
  it('refuses a resource the group does not declare, naming the group and the need', () => {
    const { masterKey: _dropped, ...withoutKey } = filesNeeds;
    const resources = groupResources('files', withoutKey, config);

    expect(() => masterKeyOf(resources)).toThrow(MissingNeedError);
    expect(() => masterKeyOf(resources)).toThrow(
      'The files function uses masterKey, which functions/files/needs.ts does not declare',
    );
  });

  it('makes a group without the master key answer 500 (a wiring bug), never 401, and log the missing need', async () => {
    const { masterKey: _dropped, ...withoutKey } = filesNeeds;
    const handler = createFilesHandler(() => buildFilesDeps(groupResources('files', withoutKey, config)), {
      maxUploadBytes: config.upload.max_bytes,
    });

    const answer = await listTokens(handler);

    expect(answer.status).toBe(500);
    expect(answer.body.message).toBe('Internal server error');
    expect(log.lines.join('\n')).toContain('functions/files/needs.ts does not declare');
  });
});
