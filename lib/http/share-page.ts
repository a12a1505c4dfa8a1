// GET /s/{id}: a share link as a page without script (docs/DESIGN.md 16), under the same rules as /docs: one
// inline style sheet allowed by its hash, every text escaped; images from the service's own origin only; a
// password form that posts to the page itself; a "Report" link for each image (and for a file's share) to
// the console's report page (docs/MODERATION.md "Reports"). Where proof of work is required the password
// form alone runs a script: ALTCHA's widget from the console's build on this origin, or Turnstile's. Branded
// with the operator's site (docs/DEPLOYMENT.md "Branding"); its head carries OpenGraph and Twitter card tags
// whose image is the first file's thumbnail through the share (docs/ALBUMS.md "Link previews").
import { createHash } from 'node:crypto';
import type { PageChallenge } from '#lib/accounts/proof-of-work.ts';
import type { ShareItemView } from '#lib/files/share-views.ts';
import { escapeHtml } from '#lib/platform/html.ts';
import { DEFAULT_FAVICON } from '#lib/platform/site/favicon.ts';
import type { SiteSettings } from '#lib/platform/site/site.ts';
import { INLINE_MAX_BYTES } from './stored-file.ts';

/** The console build's entry that fills the form's `altcha` (web/src/share-altcha.ts, web/vite.config.ts). */
export const SHARE_ALTCHA_SCRIPT = '/console/share-altcha-1.js';
const TURNSTILE = 'https://challenges.cloudflare.com';

/** What the page shows of the site. */
export type PageSite = Pick<SiteSettings, 'name' | 'logo_url' | 'accent_color' | 'favicon'>;

/** An item the page draws: what `POST /api/v1/shares/{id}/open` answers for it. */
export type SharePageItem = ShareItemView;

export type SharePageState =
  | {
      kind: 'open';
      album: { name: string; description: string } | null;
      items: SharePageItem[];
      views: number;
      maxViews: number | null;
      expiresAt: string | null;
      /** The console (`{base_url}/`) and, for a file's share, the page's own link: what a Report link names. */
      report: { console: string; page: string | null };
      /** A link preview's fetch (docs/ALBUMS.md "Link previews"): the head and a title, no file listed. */
      preview?: boolean;
    }
  | { kind: 'password'; id: string; error: string | null; challenge: PageChallenge }
  | { kind: 'refused'; title: string; message: string };

// Thumbnails in a grid that fills the width: four or five across at 1280 px, two at 360 px.
const STYLE = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2430;background:#f4f6f9}
main{max-width:72rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.6rem;margin:0 0 .25rem;overflow-wrap:anywhere}
.lead{color:#465062;margin:0 0 1rem;overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,13rem),1fr));gap:1rem;list-style:none;padding:0;margin:0}
.grid li{background:#fff;border:1px solid #d7dce4;border-radius:8px;overflow:hidden}
.grid a{display:block;color:inherit;text-decoration:none}
.grid img{display:block;width:100%;aspect-ratio:4/3;object-fit:cover;background:#e8ebf0}
.cap{padding:.5rem .75rem;font-size:.875rem}
.cap b{display:block;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.cap span{color:#465062}
.grid .report,.report{display:inline-block;padding:0 .75rem .5rem;font-size:.875rem;color:#465062;text-decoration:underline}
.meta{color:#465062;font-size:.875rem;margin-top:1.5rem}
form{background:#fff;border:1px solid #d7dce4;border-radius:8px;padding:1.25rem;max-width:24rem}
label{display:block;font-weight:600;margin-bottom:.5rem}
input{width:100%;font:inherit;padding:.5rem .6rem;border:1px solid #8a93a3;border-radius:6px}
button{margin-top:.75rem;font:inherit;padding:.5rem 1.25rem;border:0;border-radius:6px;background:var(--accent);color:#fff;cursor:pointer}
.site{display:flex;align-items:center;gap:.5rem;padding:.5rem 1rem;border-top:4px solid var(--accent);background:#fff;font-weight:600}
.site img{height:2rem;width:auto}
.error{color:#a3161b;font-weight:600}
altcha-widget{display:block;margin-top:.75rem}
.single{margin:0;background:#fff;border:1px solid #d7dce4;border-radius:8px;overflow:hidden}
.single img{display:block;margin:0 auto;width:100%;height:auto;max-height:calc(100vh - 12rem);object-fit:scale-down;background:#e8ebf0}
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
/** The site's accent colour: the page's second style sheet. */
const accentStyle = (site: PageSite) => `:root{--accent:${site.accent_color}}`;
const originOf = (link: string | null) => (link?.startsWith('https://') ? new URL(link).origin : '');

/**
 * The page's policy: its own style sheets, images from `imageOrigin` (the service's) and the site's logo and
 * icon, forms to itself; with a challenge, the widget's script, style, workers and calls (Turnstile's from
 * its origin, in its frame).
 */
export function sharePageCsp(imageOrigin: string, site: PageSite, challenge: PageChallenge = null): string {
  const from = challenge?.provider === 'turnstile' ? TURNSTILE : "'self'";
  const brand = [...new Set([originOf(site.logo_url), originOf(site.favicon)])].filter(Boolean);
  const widget = challenge
    ? [`script-src ${from}`, `connect-src ${from}`, `worker-src ${from}`, `frame-src ${from}`]
    : [];
  return [
    "default-src 'none'",
    `style-src ${sha256(STYLE)} ${sha256(accentStyle(site))}${challenge ? " 'self'" : ''}`,
    ...widget,
    ['img-src', "'self'", imageOrigin, ...brand].join(' '),
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A link to the console's report page naming `url`: plain HTML, the page runs no script. */
function reportLink(consoleUrl: string, url: string, what: string): string {
  const href = `${consoleUrl}#/report?url=${encodeURIComponent(url)}`;
  return `<a class="report" href="${escapeHtml(href)}" aria-label="${escapeHtml(`Report ${what}`)}">Report</a>`;
}

function captionHtml(item: SharePageItem): string {
  const dimensions = item.width > 0 && item.height > 0 ? `${item.width} × ${item.height}, ` : '';
  return `<div class="cap"><b>${escapeHtml(item.original_name)}</b><span>${escapeHtml(
    `${dimensions}${sizeText(item.size)}`,
  )}</span></div>`;
}

function itemHtml(item: SharePageItem, consoleUrl: string): string {
  return `<li><a href="${escapeHtml(item.url)}"><img src="${escapeHtml(item.thumbnail ?? item.url)}" alt="${escapeHtml(
    item.original_name,
  )}" loading="lazy">${captionHtml(item)}</a>${reportLink(consoleUrl, item.url, item.original_name)}</li>`;
}

/**
 * A share of one photo shows it as large as the window allows: the original itself when the share's door
 * answers it inline (a larger one is a redirect to storage, which the page's policy does not name), else
 * the thumbnail at no more than its own size. Its box takes the photo's proportions (its width and height)
 * before the bytes arrive, so nothing below it moves; `scale-down` never enlarges a small one in it.
 */
function singleHtml(item: SharePageItem, report: string): string {
  const inline = item.size <= INLINE_MAX_BYTES || item.thumbnail === null;
  const [width, height] = inline ? [item.width, item.height] : thumbnailSize(item);
  const size = width > 0 && height > 0 ? ` width="${width}" height="${height}"` : '';
  return `<figure class="single"><a href="${escapeHtml(item.url)}"><img src="${escapeHtml(
    inline ? item.url : (item.thumbnail ?? item.url),
  )}" alt="${escapeHtml(item.original_name)}"${size}></a><figcaption>${captionHtml(item)}${report}</figcaption></figure>`;
}

/** The `thumb` preset's size: 480 wide at most, the original's proportions. */
function thumbnailSize({ width, height }: SharePageItem): [number, number] {
  const scale = width > THUMBNAIL_WIDTH ? THUMBNAIL_WIDTH / width : 1;
  return [Math.round(width * scale), Math.round(height * scale)];
}

const THUMBNAIL_WIDTH = 480;

/** When a share ends, as people read it (the page runs no script, so in UTC): `2 December 2026 at 14:05 UTC`. */
export function untilText(iso: string): string {
  const when = new Date(iso);
  const text = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
  return `${text.format(when)} UTC`;
}

/**
 * The widget that fills the form's `altcha` field before it is sent: this page's only script. The form is
 * then `novalidate`: ALTCHA's check box is `required`, and its script solves it when the form is sent.
 */
function challengeHtml(challenge: PageChallenge): string {
  if (challenge?.provider === 'turnstile') {
    return `<div class="cf-turnstile" data-sitekey="${escapeHtml(challenge.siteKey)}" data-response-field-name="altcha"></div>
<script src="${TURNSTILE}/turnstile/v0/api.js" async defer></script>\n`;
  }
  if (challenge) {
    return `<altcha-widget name="altcha_widget"></altcha-widget><input type="hidden" name="altcha">
<script type="module" src="${SHARE_ALTCHA_SCRIPT}"></script>\n`;
  }
  return '';
}

function body(state: SharePageState): { title: string; html: string } {
  if (state.kind === 'refused') {
    return {
      title: state.title,
      html: `<h1>${escapeHtml(state.title)}</h1><p class="lead">${escapeHtml(state.message)}</p>`,
    };
  }
  if (state.kind === 'password') {
    return {
      title: 'Password required',
      html: `<h1>Password required</h1><p class="lead">This share is protected by a password.</p>
<form method="post" action="/s/${encodeURIComponent(state.id)}"${state.challenge ? ' data-altcha novalidate' : ''}>
${state.error ? `<p class="error" role="alert">${escapeHtml(state.error)}</p>` : ''}<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="off" maxlength="128">
${challengeHtml(state.challenge)}<button type="submit">Open</button></form>`,
    };
  }
  const title = state.album ? state.album.name : (state.items[0]?.original_name ?? 'Shared image');
  if (state.preview) return { title, html: `<h1>${escapeHtml(title)}</h1>` };
  const lead = state.album?.description ? `<p class="lead">${escapeHtml(state.album.description)}</p>` : '';
  const [only] = state.items;
  const list =
    state.items.length === 0
      ? '<p class="lead">This album is empty.</p>'
      : only && state.items.length === 1
        ? // The photo is reported on its own, as in the grid: a report names the image (moderation takes
          // down that file), whatever else the page offers.
          singleHtml(only, reportLink(state.report.console, only.url, only.original_name))
        : `<ul class="grid">${state.items.map((item) => itemHtml(item, state.report.console)).join('')}</ul>`;
  // An unlimited link's views are not counted per request (docs/ALBUMS.md): only a limit's are shown.
  const limits = [
    ...(state.maxViews === null ? [] : [escapeHtml(`Views: ${state.views} of ${state.maxViews}`)]),
    ...(state.expiresAt
      ? [
          `available until <time datetime="${escapeHtml(state.expiresAt)}">${untilText(state.expiresAt)}</time>`,
        ]
      : []),
  ].join('; ');
  const meta = limits ? `<p class="meta">${limits}.</p>` : '';
  const { console: consoleUrl, page } = state.report;
  const report = page === null ? '' : `<p>${reportLink(consoleUrl, page, 'this share')}</p>`;
  return {
    title,
    html: `<h1>${escapeHtml(title)}</h1>${lead}${list}${meta}${report}`,
  };
}

/** OpenGraph and Twitter card tags: the title, the site, and the first file's thumbnail through the share. */
function previewTags(state: SharePageState, title: string, site: PageSite): string {
  const image = state.kind === 'open' ? state.items.find((item) => item.thumbnail)?.thumbnail : undefined;
  const tags: Array<[string, string, string | undefined]> = [
    ['property', 'og:type', 'website'],
    ['property', 'og:title', title],
    ['property', 'og:site_name', site.name],
    ['property', 'og:image', image ?? undefined],
    ['name', 'twitter:card', image ? 'summary_large_image' : 'summary'],
    ['name', 'twitter:title', title],
    ['name', 'twitter:image', image ?? undefined],
  ];
  return tags
    .filter(([, , content]) => content !== undefined)
    .map(([kind, name, content]) => `<meta ${kind}="${name}" content="${escapeHtml(content ?? '')}">`)
    .join('\n');
}

function siteHeader(site: PageSite): string {
  const logo = site.logo_url ? `<img src="${escapeHtml(site.logo_url)}" alt="">` : '';
  return `<header class="site">${logo}<span>${escapeHtml(site.name)}</span></header>`;
}

export function renderSharePage(state: SharePageState, site: PageSite): string {
  const { title, html } = body(state);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(`${title} · ${site.name}`)}</title>
${previewTags(state, title, site)}
<link rel="icon" href="${escapeHtml(site.favicon ?? DEFAULT_FAVICON)}">
<style>${STYLE}</style><style>${accentStyle(site)}</style></head><body>${siteHeader(site)}<main>
${html}
</main></body></html>`;
}
