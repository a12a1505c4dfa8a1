// Hotlink rules as a site embedding an owner's image meets them through the local server playing the CDN
// (docs/IMAGES.md "Serving rules"): the owner's Referer allow-list, set through the API, refuses other
// sites' pages with 403 and serves the listed ones, renditions included; another owner's files are not
// touched; the service's own pages always pass; the takedowns worker copies the rules to the edge's store.
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ownerTagOf } from '#lib/files/names.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { lambdaContext } from '#test/support/events.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let owner: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  [owner, other] = await Promise.all([createTestAccount(), createTestAccount()]);
});

async function upload(account: TestAccount): Promise<string> {
  const form = new FormData();
  const bytes = makePng(5 + Math.floor(Math.random() * 40), 7, [Math.floor(Math.random() * 256), 9, 9]);
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'embed.png');
  const { status, body } = await app.request('POST', '/api/v1/upload', { token: account.token, body: form });
  expect(status).toBe(200);
  return new URL((body as { data: { url: string } }).data.url).pathname;
}

const embedded = (path: string, referer?: string) =>
  fetch(`${app.url}${path}`, referer === undefined ? {} : { headers: { referer } });

describe("an owner's hotlink rules", () => {
  it('refuse a Referer outside the allow-list with 403 and serve a listed one', async () => {
    // Prepare
    const [path, othersPath] = await Promise.all([upload(owner), upload(other)]);
    const before = await embedded(path, 'https://evil.example.org/page');
    const set = await app.request('PUT', '/api/v1/hotlink', {
      token: owner.token,
      body: { hosts: ['blog.example.com', '*.example.net'], allow_empty: false },
    });

    // Act
    const [listed, wildcard, outside, none, own, rendition, others] = await Promise.all([
      embedded(path, 'https://blog.example.com/2026/post'),
      embedded(path, 'https://www.example.net/'),
      embedded(path, 'https://evil.example.org/page'),
      embedded(path),
      embedded(path, `${app.url}/console/files`),
      embedded(`${path}?w=480&q=75&f=webp`, 'https://evil.example.org/page'),
      embedded(othersPath, 'https://evil.example.org/page'),
    ]);
    const read = await app.request('GET', '/api/v1/hotlink', { token: owner.token });

    // Assess
    expect(before.status).toBe(200);
    expect(set.status).toBe(200);
    expect(read.body).toMatchObject({
      data: { hosts: ['blog.example.com', '*.example.net'], allow_empty: false },
    });
    expect(listed.status).toBe(200);
    expect(wildcard.status).toBe(200);
    expect(own.status).toBe(200);
    expect(outside.status).toBe(403);
    expect(await outside.text()).toMatch(/does not allow/);
    expect(outside.headers.get('cache-control')).toBe('no-store');
    expect(none.status).toBe(403);
    expect(rendition.status).toBe(403);
    expect(others.status).toBe(200);
  });

  it('are lifted with hosts null, and refuse a host that is not one', async () => {
    const path = await upload(owner);
    await app.request('PUT', '/api/v1/hotlink', {
      token: owner.token,
      body: { hosts: ['example.com'], allow_empty: true },
    });
    expect((await embedded(path, 'https://elsewhere.org/')).status).toBe(403);

    const lifted = await app.request('PUT', '/api/v1/hotlink', {
      token: owner.token,
      body: { hosts: null, allow_empty: true },
    });
    const bad = await app.request('PUT', '/api/v1/hotlink', {
      token: owner.token,
      body: { hosts: ['https://example.com/'], allow_empty: true },
    });

    expect(lifted.status).toBe(200);
    expect((await embedded(path, 'https://elsewhere.org/')).status).toBe(200);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/hosts/);
  });

  it("reach the edge's store through the takedowns worker", async () => {
    const written: Array<[string, string]> = [];
    const { handlers } = testDeps({
      denyList: {
        put: async () => {},
        remove: async () => {},
        write: async (puts) => void written.push(...puts),
      },
    });
    await app.request('PUT', '/api/v1/hotlink', {
      token: other.token,
      body: { hosts: ['friends.example.com'], allow_empty: true },
    });

    const run = await handlers.takedowns({}, lambdaContext as Context);

    expect(run.rules).toBeGreaterThanOrEqual(1);
    expect(written).toContainEqual([
      `o:${ownerTagOf(other.account.id)}`,
      JSON.stringify({ h: ['friends.example.com'], e: true }),
    ]);
  });
});
