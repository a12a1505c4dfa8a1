// Link previews of a share (docs/ALBUMS.md "Link previews") through the local HTTP server: the page's head
// carries OpenGraph and Twitter card tags whose image is the file's thumbnail through the share, its title
// names the file and the site; a chat's bot fetching a one-view link gets the head without spending the
// view, and the person who then opens it sees it once.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { makePng } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
let user: TestAccount;
let fileId: string;

const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const meta = (page: string, name: string) =>
  new RegExp(`<meta (?:property|name)="${name}" content="([^"]*)">`)
    .exec(page)?.[1]
    ?.replaceAll('&amp;', '&');
const open = (url: string, agent: string) => fetch(app.at(url), { headers: { 'user-agent': agent } });

beforeAll(async () => {
  user = await createTestAccount();
  const form = new FormData();
  form.append('file', new Blob([makePng(40, 30, [20, 160, 60])], { type: 'image/png' }), 'harbour-dawn.png');
  const uploaded = await app.api('POST', '/api/v1/upload', { token: user.token, body: form });
  expect(uploaded.status).toBe(200);
  fileId = uploaded.data.id;
});

describe('link previews of a share page', () => {
  it('carries OpenGraph and Twitter card tags with the thumbnail through the share', async () => {
    const share = await app.api('POST', '/api/v1/shares', { token: user.token, body: { file_id: fileId } });
    const page = await (await open(share.data.url, BROWSER)).text();

    expect(page).toContain('<title>harbour-dawn.png · Image host</title>');
    expect(meta(page, 'og:title')).toBe('harbour-dawn.png');
    expect(meta(page, 'og:site_name')).toBe('Image host');
    expect(meta(page, 'twitter:card')).toBe('summary_large_image');
    const image = meta(page, 'og:image') ?? '';
    expect(image.startsWith(`${share.data.url}/i/`)).toBe(true);
    expect(new URL(image).search).toBe('?w=480&q=75&f=webp');
    expect(meta(page, 'twitter:image')).toBe(image);
    // A bot's page, which lists nothing, is never kept where a person's request could be answered with it.
    const preview = await open(share.data.url, SLACK);
    expect(preview.headers.get('cache-control')).toBe('no-store');
    expect(meta(await preview.text(), 'og:image')).toMatch(/\?w=480&q=75&f=webp$/);
    const thumbnail = await fetch(app.at(image));
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
  });

  it("does not spend a one-view link's view on a bot's fetch: the person who opens it next sees it, once", async () => {
    const share = await app.api('POST', '/api/v1/shares', {
      token: user.token,
      body: { file_id: fileId, max_views: 1 },
    });
    for (const agent of [SLACK, 'TelegramBot (like TwitterBot)', 'facebookexternalhit/1.1']) {
      const preview = await open(share.data.url, agent);
      const head = await preview.text();
      expect(preview.status, agent).toBe(200);
      expect(meta(head, 'og:image')).toMatch(/\?w=480&q=75&f=webp$/);
      // The preview lists no file: no original's link, no view count.
      expect(head).not.toMatch(/<a href="[^"]*\/i\/[^"?]*"/);
      expect(head).not.toContain('Views:');
    }
    // A HEAD request (some link checkers send one) counts nothing either.
    expect((await fetch(app.at(share.data.url), { method: 'HEAD' })).status).not.toBe(200);
    expect((await app.api('GET', '/api/v1/shares', { token: user.token })).data.items[0]).toMatchObject({
      id: share.data.id,
      views: 0,
    });

    const viewed = await open(share.data.url, BROWSER);
    expect(viewed.status).toBe(200);
    expect(await viewed.text()).toContain('Views: 1 of 1');
    expect((await open(share.data.url, BROWSER)).status).toBe(410);
    // Spent: a bot now hears what anyone hears.
    expect((await open(share.data.url, SLACK)).status).toBe(410);
  });
});
