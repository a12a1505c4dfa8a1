// The share-link routes (docs/DESIGN.md 16): the owner's shares (create, list, revoke),
// opening one without a login, its page without script, its random image and its images through its own
// door. Thin: validate, call the share service, shape the envelope or the page.
import { AppError, errors } from '#lib/core/errors.ts';
import { THUMBNAIL_QUERY } from '#lib/files/rendition-query.ts';
import { SHARE_PASSWORD_MAX, type ShareService } from '#lib/files/shares.ts';
import { created, html, ok, publicFor } from '#lib/http/envelope.ts';
import { statusOf } from '#lib/http/errors.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { requirePrincipal } from '#lib/http/principal.ts';
import { reportBody, reportReceived } from '#lib/http/schemas/moderation.ts';
import {
  createBody,
  openBody,
  openedView,
  shareList,
  shareRevoked,
  shareView,
} from '#lib/http/schemas/shares.ts';
import { type PageSite, renderSharePage, type SharePageState, sharePageCsp } from '#lib/http/share-page.ts';
import { renditionResult, storedFileResult } from '#lib/http/stored-file.ts';
import type { HttpRequest, HttpResult } from '#lib/http/types.ts';
import { pageQuery } from '#lib/platform/db/paging.ts';
import type { SharesDeps } from './deps.ts';

const callerOf = (request: HttpRequest<unknown, unknown>) => requirePrincipal(request).accountId;

/**
 * A link preview's fetch (docs/ALBUMS.md "Link previews"): a chat's or social network's bot by its user
 * agent. It gets the page's head and title without spending a limited link's view.
 */
const PREVIEW_AGENTS =
  /Slackbot|Twitterbot|facebookexternalhit|Facebot|Discordbot|TelegramBot|WhatsApp|LinkedInBot|Mastodon|SkypeUriPreview|redditbot|Embedly/i;
const isPreview = (request: HttpRequest<unknown, unknown>) =>
  PREVIEW_AGENTS.test(request.headers['user-agent'] ?? '');

/** The page's answer: never cached (an open of a limited share is a view), with its own policy. */
function page(
  shares: ShareService,
  site: PageSite,
  state: SharePageState,
  status: number,
  extra: Record<string, string> = {},
) {
  const result = html(renderSharePage(state, site), status);
  const challenge = state.kind === 'password' ? state.challenge : null;
  return {
    ...result,
    headers: {
      ...result.headers,
      'content-security-policy': sharePageCsp(shares.imageOrigin, site, challenge),
      'cache-control': 'no-store',
      ...extra,
    },
  } satisfies HttpResult;
}

/**
 * Opens the share for the page (a password with its solved challenge, when required); refusals become the
 * page's own states, with the API's statuses.
 */
async function openPage(
  { shares, proofOfWork, site: siteStore }: SharesDeps,
  request: HttpRequest<unknown, unknown>,
  { password, altcha }: { password?: string | undefined; altcha?: string | undefined } = {},
): Promise<HttpResult> {
  const id = request.params.id ?? '';
  const { site } = await siteStore.current();
  const show = (state: SharePageState, status: number, extra?: Record<string, string>) =>
    page(shares, site, state, status, extra);
  const passwordPage = (error: string | null, status: number) =>
    show({ kind: 'password', id, error, challenge: proofOfWork.pageChallenge() }, status);
  const preview = password === undefined && isPreview(request);
  try {
    if (password !== undefined) await proofOfWork.check(altcha, request.sourceIp);
    const opened = await shares.open(id, password, request.sourceIp, !preview);
    // Anyone's same page, with nothing counted per open: the CDN may keep it a minute (no longer than
    // the share lives). A password or a view limit makes each open its own; a preview is never kept, so
    // the CDN never answers a person with a bot's page.
    const lifetime = password === undefined && !preview ? shares.cacheableFor(opened) : undefined;
    // `{base_url}/s/<id>`: the console is `{base_url}/`, where the page's Report links go.
    const pageUrl = shares.pageUrl(opened.share.id);
    const result = show(
      {
        kind: 'open',
        preview,
        album: opened.album,
        items: opened.items,
        views: opened.share.views,
        maxViews: opened.share.max_views,
        expiresAt: opened.share.expires_at,
        // An album's share is reported image by image (the API refuses its page's link).
        report: {
          console: pageUrl.slice(0, pageUrl.lastIndexOf('/s/') + 1),
          page: opened.album ? null : pageUrl,
        },
      },
      200,
    );
    return lifetime === undefined ? result : publicFor(result, lifetime);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const status = statusOf(error);
    if (status === 401) return passwordPage(password === undefined ? null : 'That password is wrong.', 401);
    if (status === 400) return passwordPage(`The check was not passed (${error.message}).`, 400);
    if (status === 404) {
      return show(
        { kind: 'refused', title: 'Not found', message: 'There is no share at this address.' },
        404,
      );
    }
    if (status === 410) {
      return show(
        { kind: 'refused', title: 'No longer available', message: 'This share is no longer available.' },
        410,
      );
    }
    if (status === 429) {
      const wait = error.retryAfterSeconds ?? 60;
      return show(
        {
          kind: 'refused',
          title: 'Too many attempts',
          message: `Too many wrong passwords; try again in ${wait} seconds.`,
        },
        429,
        { 'retry-after': String(wait) },
      );
    }
    throw error;
  }
}

/** `password` and `altcha` of the page's urlencoded form; absent or empty is none. */
function formFields(raw: Buffer) {
  const form = new URLSearchParams(raw.toString('utf8'));
  const field = (name: string, max: number) => form.get(name)?.slice(0, max + 1) || undefined;
  return { password: field('password', SHARE_PASSWORD_MAX), altcha: field('altcha', 4096) };
}

const sortedQuery = (query: string) => {
  const params = new URLSearchParams(query);
  params.sort();
  return params.toString();
};
const THUMBNAIL = sortedQuery(THUMBNAIL_QUERY);

/**
 * A share's image through its door: the original, or its thumbnail (the one rendition the page shows, so a
 * share's link renders nothing else), kept by browsers and the CDN no longer than the share allows.
 */
async function shareImage(deps: SharesDeps, request: HttpRequest<unknown, unknown>): Promise<HttpResult> {
  const thumbnail = request.rawQuery !== '';
  if (thumbnail && sortedQuery(request.rawQuery) !== THUMBNAIL) {
    throw errors.badRequest(`query: a share shows its files and their thumbnails (${THUMBNAIL_QUERY}) only`);
  }
  const { key, maxAgeSeconds } = await deps.shares.image(request.params.id ?? '', request.params.grant ?? '');
  const result = thumbnail
    ? renditionResult(
        await deps.renditions.serve({ key, query: new URLSearchParams(THUMBNAIL_QUERY), accept: undefined }),
      )
    : await storedFileResult(deps.storage, key);
  if (result.status !== 200) return result;
  return { ...result, headers: { ...result.headers, 'cache-control': `public, max-age=${maxAgeSeconds}` } };
}

export function shareRoutes(deps: () => SharesDeps) {
  const shares = () => deps().shares;
  return {
    'POST /api/v1/shares': defineRoute({
      summary:
        "A share link for one of the caller's files or albums (`file_id` or `album_id`), with an optional password, expiry (`expires_at`) and view limit (`max_views`).",
      body: createBody,
      response: shareView,
      successStatus: 201,
      run: async (request) => created(await shares().create(callerOf(request), request.body)),
    }),
    'GET /api/v1/shares': defineRoute({
      summary: "The caller's share links, newest first (revoked ones leave the list).",
      query: pageQuery,
      response: shareList,
      run: async (request) => ok(await shares().list(callerOf(request), request.query)),
    }),
    'DELETE /api/v1/shares/{id}': defineRoute({
      summary: 'Revokes a share link: its opens answer 410 from now on.',
      response: shareRevoked,
      run: async (request) => ok(await shares().revoke(callerOf(request), request.params.id ?? '')),
    }),
    'POST /api/v1/shares/{id}/open': defineRoute({
      summary:
        'Opens a share (no login), counting one view when it has a view limit: the file or the album\'s current files, by URL only. 401 a missing or wrong password (429 after 10), 410 "share is no longer available".',
      body: openBody,
      response: openedView,
      errors: [401, 404, 410, 429, 451],
      run: async (request) => {
        const password = request.body.password || undefined;
        if (password !== undefined) await deps().proofOfWork.check(request.body.altcha, request.sourceIp);
        return ok(await shares().open(request.params.id ?? '', password, request.sourceIp));
      },
    }),
    'GET /s/{id}': defineRoute({
      summary:
        "The share as a page without script; a password share shows its form (401), with ALTCHA's widget where proof of work is required.",
      responseContentType: 'text/html',
      responseDescription: 'The shared file or album, or the password form, or why it cannot be shown.',
      errors: [401, 410, 429, 451],
      run: async (request) => openPage(deps(), request),
    }),
    'POST /s/{id}': defineRoute({
      summary:
        "The share page's password form: `password`, and `altcha` where proof of work is required (400 without).",
      requestContentType: 'application/x-www-form-urlencoded',
      responseContentType: 'text/html',
      responseDescription: 'The shared file or album, or the form again (401) or why it cannot be shown.',
      errors: [401, 410, 429, 451],
      maxBodyBytes: 4096,
      run: async (request) => openPage(deps(), request, formFields(request.rawBody)),
    }),
    'GET /s/{id}/random': defineRoute({
      summary:
        'A 302 to one random image of a shared album (or the shared file), counted as a view; 401 for a share with a password.',
      successStatus: 302,
      responseDescription: "A redirect (Cache-Control: no-store) to the image's link through the share.",
      errors: [401, 404, 410, 451],
      run: async (request) => ({
        kind: 'raw',
        status: 302,
        body: '',
        headers: { location: await shares().random(request.params.id ?? ''), 'cache-control': 'no-store' },
      }),
    }),
    'POST /api/v1/reports': defineRoute({
      summary:
        'Reports a file to the moderators (anyone): `url` is any link the service gave out (`/i/<key>`, a file share `/s/<id>`, a share image link), `reason` one of sexual, violence, hate, illegal, copyright, spam, other, `note` optional. At `moderation.report_rate` per address (docs/MODERATION.md "Reports").',
      body: reportBody,
      response: reportReceived,
      successStatus: 202,
      errors: [400, 404, 429],
      run: async (request) => {
        await deps().proofOfWork.check(request.body.altcha, request.sourceIp);
        return ok(await deps().reports.report(request.body, request.sourceIp), 202);
      },
    }),
    'GET /s/{id}/i/{grant}': defineRoute({
      summary:
        "An image of a share through the share's door: the link an open or the page gave (the original, or with `w=480&q=75&f=webp` its thumbnail), answered while the share is live and the link unexpired; counts no view.",
      responseContentType: 'application/octet-stream',
      responseDescription:
        'The bytes (Cache-Control: public, max-age of at most 60 seconds), or a 302 to a short presigned GET for an original over 4 MiB. 400 any other query; 404 a link this share did not give or a file no longer in its album; 410 the share revoked, expired or its file or album deleted, or the link expired.',
      errors: [400, 404, 410, 415, 422, 451],
      run: async (request) => shareImage(deps(), request),
    }),
  };
}
