// GET /docs: the API reference, rendered in the browser by Swagger UI (swagger-ui-dist, a maintained
// renderer with navigation by section, examples generated from the schemas, and "try it out"). Every file
// the page loads comes from this origin (GET /docs/assets/<name>), and its policy allows nothing else: no
// third-party origin, no inline script or style, requests to this origin only.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { escapeHtml } from '#lib/platform/html.ts';
import { DEFAULT_FAVICON } from '#lib/platform/site/favicon.ts';
import type { HttpResult } from './types.ts';

type Json = Record<string, unknown>;

/** The renderer's package: installed beside the meta function's bundle (infra/bundling.ts). */
export const REFERENCE_RENDERER = 'swagger-ui-dist';

// How the renderer starts: the document of this origin; never the public validator (validatorUrl null),
// never a document named by the page's query (queryConfigEnabled false); sections listed, schemas folded.
// No deep links: they put a link inside each route's button (a control within a control); the header's
// section list links to the sections' own ids instead. The request body editor and the server choice
// get the names they lack.
const START_SCRIPT = `"use strict";
const reference = document.getElementById("reference");
new MutationObserver(() => {
  for (const editor of reference.querySelectorAll("textarea:not([aria-label])")) {
    editor.setAttribute("aria-label", "Request body");
  }
  for (const choice of reference.querySelectorAll("select#servers:not([aria-label])")) {
    choice.setAttribute("aria-label", "Server");
  }
}).observe(reference, { childList: true, subtree: true });
// The header's section list: to the section's heading, whatever the renderer does with the address.
for (const link of document.querySelectorAll("nav a[href^='#']")) {
  link.addEventListener("click", (event) => {
    const heading = document.getElementById(link.getAttribute("href").slice(1));
    if (!heading) return;
    event.preventDefault();
    heading.scrollIntoView();
    heading.focus({ preventScroll: true });
  });
}
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#reference",
  deepLinking: false,
  // Sections closed until opened: Swagger UI listing every one of ~180 operations at once stopped
  // drawing after the first few (measured in Chromium), and a closed section draws nothing until asked.
  docExpansion: "none",
  defaultModelsExpandDepth: 0,
  defaultModelRendering: "example",
  displayRequestDuration: true,
  filter: true,
  validatorUrl: null,
  queryConfigEnabled: false,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;

// The page's own rules: the section list as a header, and the renderer kept inside a phone's width (long
// paths and schemas wrap or scroll inside their own box, never the page).
const PAGE_STYLE = `body{margin:0;background:#fafafa;font:15px/1.5 system-ui,sans-serif;color:#222}
header{background:#1f2933;color:#fff;padding:.75rem 1rem}
header h1{margin:0;font-size:1.25rem}header p{margin:.25rem 0 .5rem;color:#cbd2d9;font-size:.9rem}
header a{color:#9fd8ff}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .75rem}
nav a{color:#fff;text-decoration:none;font-size:.9rem}nav a:hover,nav a:focus{text-decoration:underline}
main{max-width:1200px;margin:0 auto;overflow-wrap:anywhere}
.swagger-ui .wrapper{padding:0 .75rem;box-sizing:border-box;max-width:100%}
.swagger-ui .information-container{display:none}
.swagger-ui .opblock .opblock-summary-path{max-width:100%;word-break:break-all}
@media (max-width:600px){.swagger-ui .opblock .opblock-summary{flex-wrap:wrap}
.swagger-ui .opblock .opblock-summary-description{flex-basis:100%;flex-shrink:1;word-break:normal}}
.swagger-ui .opblock-body,.swagger-ui .responses-inner,.swagger-ui .table-container,.swagger-ui .model-box{overflow-x:auto;max-width:100%}
.swagger-ui table{table-layout:auto}
.swagger-ui .highlight-code,.swagger-ui .microlight{max-width:100%;overflow-x:auto}
.swagger-ui .filter-container .operation-filter-input{max-width:100%;box-sizing:border-box}
.swagger-ui .opblock-tag{flex-wrap:wrap}
.swagger-ui .opblock-tag small{flex-basis:100%;padding:0}
.swagger-ui .btn.authorize,.swagger-ui .btn.authorize span{color:#17603a;border-color:#17603a}
.swagger-ui .btn.authorize svg{fill:#17603a}
.swagger-ui .btn.cancel{color:#a4001d;border-color:#a4001d}
.swagger-ui .btn.execute{background:#1b5a9e;border-color:#1b5a9e}
.swagger-ui .download-contents{background:#4a4f5c}
.swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1c64a3}
.swagger-ui .opblock.opblock-post .opblock-summary-method{background:#17703f}
.swagger-ui .opblock.opblock-put .opblock-summary-method{background:#9a5400}
.swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0d6e5c}
.swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b3261e}
`;

interface Asset {
  type: string;
  /** The file in the renderer's package, or the text itself. */
  file?: string;
  text?: string;
}

const ASSETS: Record<string, Asset> = {
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'reference.js': { type: 'text/javascript; charset=utf-8', text: START_SCRIPT },
  'reference.css': { type: 'text/css; charset=utf-8', text: PAGE_STYLE },
};

/**
 * The page's Content-Security-Policy: scripts, styles and fonts of this origin only, requests ("try it
 * out", the document) to this origin only, images of this origin or inline (the renderer's icons).
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const require = createRequire(import.meta.url);
const loaded = new Map<string, Promise<{ plain: Buffer; gzip: Buffer; etag: string }>>();

/** An asset's bytes, read (and compressed) once per container, on its first request. */
function loadAsset(asset: Asset): Promise<{ plain: Buffer; gzip: Buffer; etag: string }> {
  const name = asset.file ?? asset.type;
  let found = loaded.get(name);
  if (!found) {
    found = (
      asset.file
        ? readFile(require.resolve(`${REFERENCE_RENDERER}/${asset.file}`))
        : Promise.resolve(Buffer.from(asset.text ?? '', 'utf8'))
    ).then((plain) => ({
      plain,
      gzip: gzipSync(plain),
      etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 22)}"`,
    }));
    found.catch(() => loaded.delete(name));
    loaded.set(name, found);
  }
  return found;
}

/** Whether `name` is one of the page's files. */
export function isDocsAsset(name: string): boolean {
  return Object.hasOwn(ASSETS, name);
}

/**
 * GET /docs/assets/<name>: one of the page's files, gzip-compressed when the client takes it (the bundle is
 * 1.7 MB as it is, about a third of that compressed), cached by the browser and the CDN for a day.
 */
export async function docsAsset(name: string, acceptEncoding: string | undefined): Promise<HttpResult> {
  const asset = ASSETS[name]!;
  const { plain, gzip, etag } = await loadAsset(asset);
  const compressed = /\bgzip\b/.test(acceptEncoding ?? '');
  return {
    kind: 'raw',
    status: 200,
    body: compressed ? gzip : plain,
    headers: {
      'content-type': asset.type,
      'cache-control': 'public, max-age=86400',
      etag,
      vary: 'Accept-Encoding',
      ...(compressed ? { 'content-encoding': 'gzip' } : {}),
    },
  };
}

/** The guides the document's description names (`docs/<name>`), each served as text at /docs/guides/<name>. */
export const DOCS_GUIDES: readonly string[] = ['ACCOUNTS.md', 'UPLOADS.md', 'PAYMENTS-GUIDE.md'];

// Bundled, the guides sit beside the bundle (infra/bundling.ts PROJECT_FILES); else in the project's docs/.
const GUIDES = new URL(import.meta.url.endsWith('.ts') ? '../../docs/' : './docs/', import.meta.url);

/** GET /docs/guides/<name>: one of DOCS_GUIDES as it is written (Markdown), shown by the browser as text. */
export async function docsGuide(name: string): Promise<HttpResult> {
  return {
    kind: 'raw',
    status: 200,
    body: await readFile(new URL(name, GUIDES)),
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'public, max-age=3600',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    },
  };
}

/** The description's text with each guide it names (`docs/UPLOADS.md`) a link to it. */
function linkGuides(text: string): string {
  return escapeHtml(text).replace(/docs\/([A-Z-]+\.md)/g, (path, name: string) =>
    DOCS_GUIDES.includes(name) ? `<a href="/docs/guides/${name}">${path}</a>` : path,
  );
}

/** The page: a header with the reference's sections (from the document's tags), and the renderer. */
export function renderDocsPage(document: Json): string {
  const info = (document.info as Json | undefined) ?? {};
  const tags = (document.tags as Array<{ name: string }> | undefined) ?? [];
  const title = escapeHtml(String(info.title ?? 'API'));
  const sections = tags
    .map((tag) => {
      // Swagger UI's id of a section's heading: its tag, spaces as underscores.
      const anchor = `#operations-tag-${tag.name.replaceAll(' ', '_')}`;
      return `<li><a href="${escapeHtml(anchor)}">${escapeHtml(tag.name)}</a></li>`;
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}: API reference</title>
<link rel="icon" href="${DEFAULT_FAVICON}">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/reference.css">
</head><body>
<header><h1>${title} <small>${escapeHtml(String(info.version ?? ''))}</small></h1>
<p>${linkGuides(String(info.description ?? ''))} The document itself: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</p>
<nav aria-label="Sections"><ul>${sections}</ul></nav></header>
<main id="reference"><noscript><p>The reference needs JavaScript; the document is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p></noscript></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/reference.js"></script>
</body></html>`;
}
