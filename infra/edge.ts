// What runs or applies at CloudFront's edge: the viewer-request functions, the image cache policy and the
// response header policies (HSTS, the stored files' and the console's CSP); the web ACL is infra/waf.ts's.
import { Duration, type Stack } from 'aws-cdk-lib';
import {
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  KeyValueStore,
  OriginRequestCookieBehavior,
  OriginRequestHeaderBehavior,
  OriginRequestPolicy,
  OriginRequestQueryStringBehavior,
  ResponseHeadersPolicy,
  type ResponseSecurityHeadersBehavior,
} from 'aws-cdk-lib/aws-cloudfront';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { HELD_MESSAGE } from '#lib/files/moderation-state.ts';
import { keyExpired, ownerTagOfKey } from '#lib/files/names.ts';
import {
  type EdgeRules,
  edgeRefusal,
  edgeRulesEntry,
  planInForce,
  planTagOf,
  REFUSAL_MESSAGES,
  refererHostOf,
} from '#lib/files/owner-rules.ts';
import {
  ACCEPTS_AVIF,
  ACCEPTS_WEBP,
  acceptClassOf,
  decodeQueryPart,
  RENDITION_PARAMS,
} from '#lib/files/rendition-query.ts';
import { SHARE_IMAGE_MAX_AGE_SECONDS } from '#lib/files/share-grants.ts';
import { PUBLIC_PAGE_MAX_AGE_SECONDS } from '#lib/http/envelope.ts';
import { RAW_CONTENT_CSP } from '#lib/http/stored-file.ts';
import { HELD_ENTRY_PREFIX } from '#lib/moderation/edge-holds.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { consoleContentSecurityPolicy } from './console-policy.ts';

/** Browsers keep to https for this long once they have seen the header (one year). */
export const HSTS_MAX_AGE = Duration.days(365);

/** The API's origin id in the distribution: the /i/* viewer-request function selects it by this name. */
export const API_ORIGIN_ID = 'api';

/**
 * What `f=auto` is rendered as for this viewer (`avif`, `webp` or `other`), set by the /i/* viewer-request
 * function from the viewer's Accept: the one header in the /i/* cache key.
 */
export const ACCEPT_CLASS_HEADER = 'x-accept-class';

const regexLiteral = (pattern: RegExp) => `/${pattern.source}/${pattern.flags}`;

// Runs at the edge before the cache, on every /i/ request. Only `/i/<yyyy>/<mm>/<dd>/<file>` is served;
// anything else under /i/ (e.g. the incoming/ area of unconfirmed uploads, the trash/ area) is 404 and
// reaches no origin, and so is an expiring file's key past the end it carries (keyExpired, lib/files/names.ts),
// renditions included: no look-up, the same rule the local edge runs.
// Every parameter that is not a rendition's (p, w, h, fit, q, f, s: `v`, `fbclid`, `utm_*`) is dropped
// first, so it neither splits the cache nor reaches an origin. Left without one, the key becomes the
// object's and the bucket answers (the original). With one it is a rendition: the uri stays /i/<key> (the
// render function's route) and the request goes to the API origin, so the bucket never sees a query. The
// query is normalized, so one rendition is one cache key however its parameters were written: each name
// and value read as the function reads them (CloudFront hands them over as the viewer encoded them;
// decodeQueryPart, the function's own, makes `%66=auto` the `f=auto` the function renders) and written back
// percent-encoded in the fixed order (repeats kept, so the function answers them 400 under their own key). For f=auto the Accept header's
// class, by the same rules the function renders by (lib/files/rendition-query.ts), is the cache key's
// header; any other request has it removed, so a viewer cannot split the cache by sending one. A key on
// the deny-list of taken-down files (the KeyValueStore, lib/platform/cdn/deny-list.ts) is 404 before the
// cache, renditions included; a file held for review (`h:<key>`, lib/moderation/edge-holds.ts) is 451 with
// a short page. Then the owner's rules (lib/files/owner-rules.ts, read from the same store by
// the owner's tag in the key) and the deployment's Referer allow-list (`hotlink`, written in at synth): a
// stopped owner's files, or a Referer a list refuses, are 403 with a short page, before the cache. First
// line as CloudFront requires.
export function imageKeyFunction(deploymentRules: EdgeRules | undefined): string {
  return `import cf from 'cloudfront';

var DENY_LIST = cf.kvs();
var DEPLOYMENT_RULES = ${JSON.stringify(deploymentRules ?? null)};
var REFUSALS = ${JSON.stringify(REFUSAL_MESSAGES)};
var RENDITION_PARAMS = ${JSON.stringify(RENDITION_PARAMS)};
var ACCEPTS_AVIF = ${regexLiteral(ACCEPTS_AVIF)};
var ACCEPTS_WEBP = ${regexLiteral(ACCEPTS_WEBP)};

${decodeQueryPart.toString()}

${ownerTagOfKey.toString()}

${keyExpired.toString()}

${objectKeyOf.toString()}

${refererHostOf.toString()}

${edgeRefusal.toString()}

${planInForce.toString()}

${acceptClassOf.toString()}

async function handler(event) {
  var request = event.request;
  var key = request.uri.substring(2);
  if (!/^\\/\\d{4}\\/\\d{2}\\/\\d{2}\\/[^\\/]+$/.test(key)) {
    return { statusCode: 404, statusDescription: 'Not Found' };
  }
  if (keyExpired(key, Date.now())) return { statusCode: 404, statusDescription: 'Not Found' };
  if (await DENY_LIST.exists(key.substring(1))) return { statusCode: 404, statusDescription: 'Not Found' };
  if (await DENY_LIST.exists('${HELD_ENTRY_PREFIX}' + key.substring(1))) {
    return {
      statusCode: 451,
      statusDescription: 'Unavailable For Legal Reasons',
      headers: { 'content-type': { value: 'text/plain; charset=utf-8' }, 'cache-control': { value: 'no-store' } },
      body: { encoding: 'text', data: ${JSON.stringify(HELD_MESSAGE)} },
    };
  }
  var tag = ownerTagOfKey(key);
  var rules;
  if (tag !== undefined) {
    try {
      rules = JSON.parse(await DENY_LIST.get('${edgeRulesEntry('')}' + tag));
    } catch (absent) {
      rules = undefined;
    }
  }
  var referer = request.headers.referer;
  var host = request.headers.host;
  var refusal = edgeRefusal(
    rules,
    DEPLOYMENT_RULES || undefined,
    refererHostOf(referer ? referer.value : undefined),
    host ? host.value.replace(/:\\d+$/, '') : '',
  );
  if (refusal !== undefined) {
    return {
      statusCode: 403,
      statusDescription: 'Forbidden',
      headers: { 'content-type': { value: 'text/plain; charset=utf-8' }, 'cache-control': { value: 'no-store' } },
      body: { encoding: 'text', data: REFUSALS[refusal] },
    };
  }
  var plan = planInForce(rules, Date.now());
  var mark;
  if (plan !== undefined) {
    try {
      mark = JSON.parse(await DENY_LIST.get('${edgeRulesEntry(planTagOf(''))}' + plan)).w;
    } catch (absent) {
      mark = undefined;
    }
  }
  delete request.headers['${ACCEPT_CLASS_HEADER}'];
  var given = request.querystring;
  var pairs = [];
  Object.keys(given).forEach(function (name) {
    (given[name].multiValue || [given[name]]).forEach(function (item) {
      var pair = [decodeQueryPart(name), decodeQueryPart(item.value)];
      if (RENDITION_PARAMS.indexOf(pair[0]) >= 0) pairs.push(pair);
    });
  });
  if (pairs.length === 0 && mark) {
    cf.selectRequestOriginById('${API_ORIGIN_ID}');
    request.querystring = { wm: { value: mark } };
    return request;
  }
  if (pairs.length === 0) {
    request.querystring = {};
    request.uri = '/' + objectKeyOf(key.substring(1));
    return request;
  }
  cf.selectRequestOriginById('${API_ORIGIN_ID}');
  var query = {};
  RENDITION_PARAMS.forEach(function (name) {
    var values = pairs
      .filter(function (pair) { return pair[0] === name; })
      .map(function (pair) { return { value: encodeURIComponent(pair[1]) }; });
    if (values.length === 0) return;
    query[name] = values.length === 1 ? values[0] : { value: values[0].value, multiValue: values };
  });
  if (mark) query.wm = { value: mark };
  request.querystring = query;
  var auto = pairs.some(function (pair) { return pair[0] === 'f' && pair[1] === 'auto'; });
  if (auto) {
    var accept = request.headers.accept;
    request.headers['${ACCEPT_CLASS_HEADER}'] = { value: acceptClassOf(accept ? accept.value : undefined) };
  }
  return request;
}`;
}

/** The deployment's Referer allow-list (`hotlink`) as the edge reads it; undefined: none. */
export function deploymentEdgeRules(hotlink: { referers?: string[] | undefined; allow_empty: boolean }) {
  return hotlink.referers === undefined ? undefined : { h: hotlink.referers, e: hotlink.allow_empty };
}

// Runs at the edge on every API request: the viewer's address, written over anything the client sent,
// in a header the API trusts only with the origin secret (lib/http/front-door.ts).
export const VIEWER_ADDRESS_FUNCTION = `function handler(event) {
  var request = event.request;
  request.headers['x-viewer-address'] = { value: event.viewer.ip };
  return request;
}`;

/**
 * The security headers of both policies: HSTS and nosniff always win over the origin's; framing and
 * referrer do too where `ownHeaders` (the console, whose pages are all the stack's own).
 */
function securityHeadersOf(
  frameOption: HeadersFrameOption,
  ownHeaders: boolean,
): ResponseSecurityHeadersBehavior {
  return {
    strictTransportSecurity: { accessControlMaxAge: HSTS_MAX_AGE, includeSubdomains: true, override: true },
    contentTypeOptions: { override: true },
    frameOptions: { frameOption, override: ownHeaders },
    referrerPolicy: {
      referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN,
      override: ownHeaders,
    },
    xssProtection: { protection: true, modeBlock: true, override: false },
  };
}

/** What the distribution's behaviours attach; each is built in the stack's scope (logical ids kept). */
export interface EdgePolicies {
  viewerAddress: CloudFrontFunction;
  imageKey: CloudFrontFunction;
  imageCache: CachePolicy;
  shareImageCache: CachePolicy;
  publicPageCache: CachePolicy;
  imageOriginRequest: OriginRequestPolicy;
  securityHeaders: ResponseHeadersPolicy;
  imageHeaders: ResponseHeadersPolicy;
  consoleHeaders: ResponseHeadersPolicy;
}

/**
 * The deny-list of taken-down files the /i/* function reads (lib/platform/cdn/deny-list.ts), one per stack:
 * the takedowns worker writes it (its need `cdn`).
 */
export function takedownDenyList(stack: Stack): KeyValueStore {
  const id = 'TakedownDenyList';
  return (
    (stack.node.tryFindChild(id) as KeyValueStore | undefined) ??
    new KeyValueStore(stack, id, { comment: 'Taken-down files: the /i/* edge function answers 404 for them' })
  );
}

/**
 * `deletedMaxAgeSeconds` is the stage's `cdn.deleted_max_age_seconds`: how long the edge keeps an /i/
 * object, and so how long a deleted file can still be served from it (no invalidation per delete).
 */
export function createEdgePolicies(
  stack: Stack,
  bucket: Bucket,
  deletedMaxAgeSeconds: number,
  deploymentRules: EdgeRules | undefined,
): EdgePolicies {
  const viewerAddress = new CloudFrontFunction(stack, 'ViewerAddress', {
    comment: 'Passes the viewer address to the API (API Gateway sees only the edge server)',
    code: FunctionCode.fromInline(VIEWER_ADDRESS_FUNCTION),
    runtime: FunctionRuntime.JS_2_0,
  });
  const imageKey = new CloudFrontFunction(stack, 'ImageKey', {
    comment: 'Maps /i/<key> to the object key, sends renditions to the API, refuses any other /i/ path',
    code: FunctionCode.fromInline(imageKeyFunction(deploymentRules)),
    runtime: FunctionRuntime.JS_2_0,
    keyValueStore: takedownDenyList(stack),
  });
  // Keys carry a fresh uuid per upload and are never rewritten, so browsers keep them a year, immutably (the
  // objects' Cache-Control). The edge keeps them no longer than the stage's cdn.deleted_max_age_seconds:
  // CloudFront caps the object's max-age at the maximum TTL, and this is what lets a deleted file leave the
  // edge with no invalidation (docs/UPLOADS.md "Deleting"; takedowns are invalidated within minutes).
  // Renditions are as immutable as their originals and leave the edge the same way. Their key is the whole
  // (normalized) query, so an unknown parameter is its own entry holding the function's 400, and for f=auto
  // the viewer's Accept class: the one header whose value changes the answer.
  const edgeMaxAge = Duration.seconds(deletedMaxAgeSeconds);
  const imageCache = new CachePolicy(stack, 'ImageCache', {
    comment: 'Immutable images and renditions, kept at the edge for cdn.deleted_max_age_seconds',
    defaultTtl: edgeMaxAge,
    maxTtl: edgeMaxAge,
    minTtl: Duration.seconds(0),
    queryStringBehavior: CacheQueryStringBehavior.all(),
    headerBehavior: CacheHeaderBehavior.allowList(ACCEPT_CLASS_HEADER),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
  // A share's images (/s/<id>/i/<grant>, from the shares function): kept only as long as the answer says,
  // at most SHARE_IMAGE_MAX_AGE_SECONDS, so a revoked share's images leave the edge within that; nothing
  // kept when the function says nothing. Keyed by the grant in the path and the query.
  const shareImageCache = new CachePolicy(stack, 'ShareImageCache', {
    comment: "A share's images: at most a minute, as the shares function says",
    defaultTtl: Duration.seconds(0),
    maxTtl: Duration.seconds(SHARE_IMAGE_MAX_AGE_SECONDS),
    minTtl: Duration.seconds(0),
    queryStringBehavior: CacheQueryStringBehavior.all(),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
  // Anonymous public pages (gallery pages, an open share's page without password or view limit): kept as
  // long as the answer says, at most PUBLIC_PAGE_MAX_AGE_SECONDS; nothing kept when it says no-store (a
  // limited share's page, whose every open counts). Keyed by the path and the query only.
  const publicPageCache = new CachePolicy(stack, 'PublicPageCache', {
    comment: 'Gallery and share pages: at most a minute, as the API says',
    defaultTtl: Duration.seconds(0),
    maxTtl: Duration.seconds(PUBLIC_PAGE_MAX_AGE_SECONDS),
    minTtl: Duration.seconds(0),
    queryStringBehavior: CacheQueryStringBehavior.all(),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
  // What a rendition's request carries to the API besides the cache key: the query, and Accept (the render
  // function picks f=auto's format from it). Never Host: API Gateway routes by its own host name. The
  // bucket gets the same, but only query-less requests reach it (IMAGE_KEY_FUNCTION).
  const imageOriginRequest = new OriginRequestPolicy(stack, 'ImageOriginRequest', {
    comment: 'Renditions: the query string and Accept to the render function, never Host',
    queryStringBehavior: OriginRequestQueryStringBehavior.all(),
    headerBehavior: OriginRequestHeaderBehavior.allowList('accept'),
    cookieBehavior: OriginRequestCookieBehavior.none(),
  });

  // One policy on every behaviour: HSTS (a year, subdomains too) plus the headers of the managed
  // SECURITY_HEADERS policy; nosniff above all for user-supplied bytes.
  const securityHeaders = new ResponseHeadersPolicy(stack, 'SecurityHeaders', {
    comment: 'HSTS and security headers on every response of the CDN',
    securityHeadersBehavior: securityHeadersOf(HeadersFrameOption.SAMEORIGIN, false),
  });
  // /i/*: a user's bytes, from the bucket (which sends no CSP) or the render function. The same headers,
  // and the raw-content policy over anything an origin sent: nothing served there runs script or loads
  // anything as this origin, even a file a browser renders as a document.
  const imageHeaders = new ResponseHeadersPolicy(stack, 'ImageHeaders', {
    comment: 'HSTS, security headers and a sandboxing Content-Security-Policy for stored files',
    securityHeadersBehavior: {
      ...securityHeadersOf(HeadersFrameOption.SAMEORIGIN, false),
      contentSecurityPolicy: { contentSecurityPolicy: RAW_CONTENT_CSP, override: true },
    },
  });
  // The console's pages: the same HSTS and headers, with a strict CSP and no framing at all.
  const consoleHeaders = new ResponseHeadersPolicy(stack, 'ConsoleHeaders', {
    comment: 'HSTS, a strict Content-Security-Policy and security headers for the web console',
    securityHeadersBehavior: {
      ...securityHeadersOf(HeadersFrameOption.DENY, true),
      contentSecurityPolicy: {
        // The bucket by its regional and its global name: which one a presigned URL carries depends on
        // the SDK and the region (us-east-1), and both are this bucket only.
        contentSecurityPolicy: consoleContentSecurityPolicy(
          [bucket.bucketRegionalDomainName, bucket.bucketDomainName].map((host) => `https://${host}`),
        ),
        override: true,
      },
    },
  });
  return {
    viewerAddress,
    imageKey,
    imageCache,
    shareImageCache,
    publicPageCache,
    imageOriginRequest,
    securityHeaders,
    imageHeaders,
    consoleHeaders,
  };
}
