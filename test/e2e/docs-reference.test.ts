// GET /docs, the API reference, as a reader uses it: Swagger UI from this origin only, under a policy that
// allows nothing else; its sections from the document's tags, each route once (the /api/v1 account aliases
// as a server of their route, not a second copy), examples from the schemas, "try it out" against this
// server; readable at 390 px without sideways scrolling.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARTIFACTS,
  type Browser,
  browserMissing,
  horizontalOverflow,
  openBrowser,
  seriousAccessibilityViolations,
} from '#test/support/browser.ts';
import { loadApiDocument } from '#test/support/contract.ts';
import { useLocalApp } from '#test/support/local-app.ts';

const app = useLocalApp();
const document = loadApiDocument();
const operations = Object.values(document.paths as Record<string, Record<string, unknown>>).flatMap((item) =>
  Object.keys(item).filter((key) => key !== 'servers'),
);

describe('GET /docs over HTTP', () => {
  it('is a page of this origin only: its scripts and style sheets under /docs/assets, nothing inline', async () => {
    const response = await fetch(app.at('/docs'));
    const page = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')?.split('; ')).toEqual([
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "font-src 'self'",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(page).not.toMatch(/<style|\sstyle=|<script>|\son\w+=/i);
    const loaded = [...page.matchAll(/<(?:script|link)\b[^>]*(?:src|href)="([^"]+)"/g)].map(
      (match) => match[1],
    );
    expect(loaded).toEqual([
      '/console/favicon.svg',
      '/docs/assets/swagger-ui.css',
      '/docs/assets/reference.css',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/reference.js',
    ]);
    // The section list comes from the document's tags, each a link to its section's heading.
    for (const tag of document.tags as Array<{ name: string }>) {
      expect(page).toContain(`href="#operations-tag-${tag.name.replaceAll(' ', '_')}"`);
    }
  });

  it('links each guide its description names, and each link opens the guide as text; any other name is a 404', async () => {
    const page = await (await fetch(app.at('/docs'))).text();
    const links = [...page.matchAll(/<a href="(\/docs\/guides\/[^"]+)">docs\/([^<]+)<\/a>/g)];
    expect(links.map((link) => link[2])).toEqual(['ACCOUNTS.md', 'UPLOADS.md', 'PAYMENTS-GUIDE.md']);
    for (const [, href, name] of links) {
      const guide = await fetch(app.at(href ?? ''));
      expect(guide.status, href).toBe(200);
      expect(guide.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await guide.text()).toBe(readFileSync(`docs/${name}`, 'utf8'));
    }
    for (const name of ['SPEC.md', '..%2Fpackage.json', 'openapi.json']) {
      expect((await fetch(app.at(`/docs/guides/${name}`))).status, name).toBe(404);
    }
  });

  it('serves each file with its type, compressed when the client accepts gzip; any other name is a 404', async () => {
    for (const [name, type] of [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['reference.js', 'text/javascript; charset=utf-8'],
      ['reference.css', 'text/css; charset=utf-8'],
    ] as const) {
      const plain = await fetch(app.at(`/docs/assets/${name}`), {
        headers: { 'accept-encoding': 'identity' },
      });
      expect(plain.status, name).toBe(200);
      expect(plain.headers.get('content-type')).toBe(type);
      expect(plain.headers.get('content-encoding')).toBeNull();
      const bytes = Buffer.from(await plain.arrayBuffer());
      expect(bytes.length).toBeGreaterThan(100);

      // Node's fetch would unpack it; the raw answer shows what travels.
      const packed = await rawGet(`/docs/assets/${name}`, { 'accept-encoding': 'gzip, br' });
      expect(packed.headers['content-encoding']).toBe('gzip');
      expect(packed.headers.vary).toBe('Accept-Encoding');
      expect(gunzipSync(packed.body).equals(bytes)).toBe(true);
    }
    const bundle = await rawGet('/docs/assets/swagger-ui-bundle.js', { 'accept-encoding': 'gzip' });
    expect(bundle.body.length).toBeLessThan(700_000);

    for (const name of ['index.html', 'swagger-ui-bundle.js.map', '..%2Fpackage.json', 'absolute-path.js']) {
      const refused = await app.request('GET', `/docs/assets/${name}`);
      expect(refused.status, name).toBe(404);
      expect(refused.body).toMatchObject({ code: 404 });
    }
  });
});

/** A GET whose body is read as sent (no decompression). */
async function rawGet(path: string, headers: Record<string, string>) {
  const { request } = await import('node:http');
  return new Promise<{ headers: Record<string, string | undefined>; body: Buffer }>((resolve, reject) => {
    request(app.at(path), { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          headers: response.headers as Record<string, string | undefined>,
          body: Buffer.concat(chunks),
        }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

const missing = browserMissing('the API reference page test');

describe.skipIf(missing)('GET /docs in Chromium', () => {
  let browser: Browser;
  let page: Page;
  const violations: string[] = [];
  const elsewhere: string[] = [];

  beforeAll(async () => {
    browser = await openBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(60_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== new URL(app.url).origin)
        elsewhere.push(request.url());
    });
    await page.goto(app.at('/docs'));
    await page.locator('.opblock-tag').first().waitFor();
  }, 120_000);

  /** Opens a section (the reference draws them closed) and gives its operations. */
  async function openSection(name: string) {
    const tag = page.locator(`#operations-tag-${name.replaceAll(' ', '_')}`);
    if ((await tag.getAttribute('data-is-open')) !== 'true') await tag.click();
    const section = page.locator('.opblock-tag-section', { has: tag });
    return section;
  }
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the sections in reading order, each route once, and loads nothing from elsewhere', async () => {
    // The header's section list leads to each section's heading.
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Back office' })
      .click();
    const heading = await page.locator('#operations-tag-Back_office').boundingBox();
    // In view: with the sections closed the page may be too short to bring a late one to the very top.
    expect(heading?.y).toBeGreaterThanOrEqual(0);
    expect(heading?.y).toBeLessThan(page.viewportSize()!.height - 40);

    const sections = await page
      .locator('.opblock-tag')
      .evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag')));
    expect(sections).toEqual((document.tags as Array<{ name: string }>).map((tag) => tag.name));
    // Each section opened in turn (then closed again): every operation once, in its section.
    const paths: Array<string | null> = [];
    for (const name of sections) {
      const section = await openSection(name ?? '');
      await section.locator('.opblock').first().waitFor();
      paths.push(
        ...(await section
          .locator('.opblock-summary-path')
          .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-path')))),
      );
      await page.locator(`#operations-tag-${(name ?? '').replaceAll(' ', '_')}`).click();
    }
    expect(paths).toHaveLength(operations.length);
    expect(paths).toContain('/auth/login');
    expect(paths.filter((path) => path?.startsWith('/api/v1/auth/'))).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(violations).toEqual([]);
  });

  it("shows a request example from the schemas, and the alias prefix as the route's second server", async () => {
    await openSection('Accounts');
    const login = page.locator('#operations-Accounts-postAuthLogin');
    await login.locator('.opblock-summary').click();
    const example = login.locator('.body-param__example, .highlight-code').first();
    await example.waitFor();
    expect(await example.innerText()).toContain('"username"');
    await login.getByRole('button', { name: 'Try it out' }).click();
    const servers = await login.locator('.operation-servers select option').allInnerTexts();
    expect(servers).toEqual([
      expect.stringMatching(/^\/ - The service address/),
      '/api/v1 - The same route under /api/v1',
    ]);
    await login.locator('.opblock-summary').click();
  });

  it('tries a route against this server and shows its answer', async () => {
    await openSection('Service');
    const health = page.locator('#operations-Service-getHealthz');
    await health.locator('.opblock-summary').click();
    await health.getByRole('button', { name: 'Try it out' }).click();
    await health.getByRole('button', { name: 'Execute' }).click();
    const answer = health.locator('.responses-table.live-responses-table');
    await answer.waitFor();
    expect(await answer.innerText()).toContain('"status": "ok"');
    expect(elsewhere).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('reads at 1280 and 390 px without sideways scrolling, and with no serious accessibility finding', async () => {
    for (const [label, size] of [
      ['desktop', { width: 1280, height: 800 }],
      ['phone', { width: 390, height: 844 }],
    ] as const) {
      await page.setViewportSize(size);
      await page.waitForTimeout(200);
      expect(await horizontalOverflow(page), `the reference scrolls sideways at ${size.width} px`).toEqual(
        [],
      );
      await page.mouse.wheel(0, -1_000_000);
      await page.screenshot({ path: `${ARTIFACTS}/docs-${label}.png`, fullPage: false });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
  });
});
