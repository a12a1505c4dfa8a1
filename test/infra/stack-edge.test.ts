import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { GROUP_NEEDS } from '#functions/needs.ts';
import {
  GALLERY_PATH_PATTERN,
  IMAGE_PATH_PATTERN,
  SHARE_IMAGE_PATH_PATTERN,
  SHARE_PAGE_PATH_PATTERN,
} from '#infra/cdn.ts';
import { CONSOLE_PATH_PATTERN, CONSOLE_ROOT_OBJECT } from '#infra/console.ts';
import {
  ACCEPT_CLASS_HEADER,
  API_ORIGIN_ID,
  imageKeyFunction as imageKeyFunctionCode,
  VIEWER_ADDRESS_FUNCTION,
} from '#infra/edge.ts';
import { StageConfigError, stageConfigFrom } from '#infra/stage-config.ts';
import { HELD_MESSAGE } from '#lib/files/moderation-state.ts';
import { expiryMark } from '#lib/files/names.ts';
import { acceptClassOf, parseRenditionQuery, renditionQueryOf } from '#lib/files/rendition-query.ts';
import { SHARE_IMAGE_MAX_AGE_SECONDS } from '#lib/files/share-grants.ts';
import { PUBLIC_PAGE_MAX_AGE_SECONDS } from '#lib/http/envelope.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import { DEFAULT_IMAGE_QUALITIES, DEFAULT_IMAGE_WIDTHS } from '#lib/platform/config/schema.ts';
import { objectKeyOf } from '#lib/platform/storage/object-keys.ts';
import { IMMUTABLE_CACHE_CONTROL } from '#lib/platform/storage/s3.ts';
import {
  actionsOf,
  CERTIFICATE_ARN,
  completedProd,
  consoleBuildFixture,
  DEV_FILE,
  distributionConfigOf,
  functionOf,
  type Json,
  PROD_ACCOUNT,
  resourcesOf,
  roleStatements,
  type Synth,
  synth,
  synthDevAndProd,
} from './stack-helpers.ts';

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  ({ dev, prod } = synthDevAndProd());
}, 60_000);

const KEY = '2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e.png';
/** The /i/* function of a deployment without a Referer allow-list (dev's and prod's). */
const IMAGE_KEY_FUNCTION_CODE = imageKeyFunctionCode(undefined);
/** CloudFront requires the origin helpers' import as a function's first line. */
const CLOUDFRONT_IMPORT = "import cf from 'cloudfront';\n";

/**
 * The /i/* viewer-request function as CloudFront runs it: its code in a fresh context, the `cloudfront`
 * module's origin helper recorded instead of applied, its KeyValueStore (the deny-list) holding `denied`.
 */
function imageKeyFunction(
  code: string = IMAGE_KEY_FUNCTION_CODE,
  denied: readonly string[] = [],
  entries: Readonly<Record<string, string>> = {},
) {
  expect(code.startsWith(CLOUDFRONT_IMPORT)).toBe(true);
  const selected: string[] = [];
  const lookedUp: string[] = [];
  const kvs = () => ({
    exists: async (key: string) => {
      lookedUp.push(key);
      return denied.includes(key);
    },
    get: async (key: string) => {
      lookedUp.push(key);
      const value = entries[key];
      if (value === undefined) throw new Error('KeyNotFound');
      return value;
    },
  });
  const cf = { selectRequestOriginById: (id: string) => void selected.push(id), kvs };
  const handler = runInNewContext(`${code.slice(CLOUDFRONT_IMPORT.length)}\nhandler;`, { cf }) as (
    event: Json,
  ) => Promise<Json>;
  return { handler, selected, lookedUp };
}

/**
 * A viewer-request event as CloudFront builds it: the query string split into names and values as the
 * viewer wrote them (CloudFront decodes no percent-escape), repeats in multiValue.
 */
function viewerEvent(uri: string, query = '', headers: Json = {}): Json {
  const querystring: Json = {};
  const written = query
    .split('&')
    .filter((part) => part !== '')
    .map((part) =>
      part.includes('=') ? [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)] : [part, ''],
    );
  for (const [name, value] of written as Array<[string, string]>) {
    const entry = querystring[name];
    if (!entry) querystring[name] = { value };
    else entry.multiValue = [...(entry.multiValue ?? [{ value: entry.value }]), { value }];
  }
  return {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: '203.0.113.9' },
    request: { method: 'GET', uri, querystring, headers: { ...headers }, cookies: {} },
  };
}

/** The query string CloudFront forwards for a request the function returned, in its order. */
const queryOf = (request: Json): string =>
  Object.entries(request.querystring as Json)
    .flatMap(([name, entry]) =>
      ((entry.multiValue ?? [entry]) as Json[]).map(({ value }) => `${name}=${value}`),
    )
    .join('&');

const imageBehaviourOf = (s: Synth): Json =>
  distributionConfigOf(s).CacheBehaviors.find(
    (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
  );

describe('CDN', () => {
  it('serves /i/* from the bucket through origin access control, cached at the edge for a day by default', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const images = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );
    const origin = config.Origins.find((candidate: Json) => candidate.Id === images.TargetOriginId);
    expect(origin.S3OriginConfig).toBeDefined();
    expect(origin.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Id'] });
    const cachePolicy = dev.resources[images.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
    expect(cachePolicy.DefaultTTL).toBe(24 * 3600);
    dev.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: { OriginAccessControlOriginType: 's3', SigningBehavior: 'always' },
    });
  });

  it("sends a share's images to the API, kept at the edge no longer than the answer says and a minute at most, sandboxed like /i/*", () => {
    const config = distributionConfigOf(dev);
    const shares = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === SHARE_IMAGE_PATH_PATTERN,
    );
    expect(shares.TargetOriginId).toBe(config.DefaultCacheBehavior.TargetOriginId);
    expect(shares.AllowedMethods.sort()).toEqual(['GET', 'HEAD']);
    const cachePolicy = dev.resources[shares.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
    expect(cachePolicy.MaxTTL).toBe(SHARE_IMAGE_MAX_AGE_SECONDS);
    expect(cachePolicy.DefaultTTL).toBe(0);
    expect(cachePolicy.MinTTL).toBe(0);
    expect(cachePolicy.ParametersInCacheKeyAndForwardedToOrigin.QueryStringsConfig.QueryStringBehavior).toBe(
      'all',
    );
    expect(shares.ResponseHeadersPolicyId).toEqual(imageBehaviourOf(dev).ResponseHeadersPolicyId);
    expect(shares.OriginRequestPolicyId).toEqual(imageBehaviourOf(dev).OriginRequestPolicyId);
  });

  it("keeps /i/* at the edge no longer than the stage's cdn.deleted_max_age_seconds, while browsers keep it a year", () => {
    const imageCacheOf = (s: Synth): Json => {
      const images = distributionConfigOf(s).CacheBehaviors.find(
        (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
      );
      return s.resources[images.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
    };
    const hourly = synth({
      config: stageConfigFrom('dev', { ...DEV_FILE, cdn: { deleted_max_age_seconds: 3600 } }),
    });

    for (const [s, seconds] of [
      [dev, 24 * 3600],
      [prod, 24 * 3600],
      [hourly, 3600],
    ] as const) {
      expect(imageCacheOf(s).MaxTTL).toBe(seconds);
      expect(imageCacheOf(s).DefaultTTL).toBe(seconds);
    }
    // What browsers are told (lib/platform/storage/s3.ts): the edge's maximum caps CloudFront,
    // not them.
    expect(IMMUTABLE_CACHE_CONTROL).toBe('public, max-age=31536000, immutable');
  });

  it('maps /i/<key> to the object key at the edge and refuses anything that is not an image key', async () => {
    const { handler, selected } = imageKeyFunction();
    const viewerRequest = (uri: string, query = '') => handler(viewerEvent(uri, query));

    expect((await viewerRequest('/i/2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e.png')).uri).toBe(
      '/2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e.png',
    );
    // A key of the current layout (14 random digits, then the owner's tag) is read from its spread prefix,
    // as the service stores it (lib/platform/storage/object-keys.ts); its URL is unchanged.
    const spread = `2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e-9e${'1'.repeat(12)}${'a'.repeat(16)}.png`;
    expect((await viewerRequest(`/i/${spread}`)).uri).toBe(`/${objectKeyOf(spread)}`);
    expect(objectKeyOf(spread)).toBe(`9e/${spread}`);
    for (const uri of ['/i/', '/i/incoming/2026/11/21/x.png', '/i/2026/11/21/a/b.png', '/i/../secret']) {
      expect((await viewerRequest(uri)).statusCode, uri).toBe(404);
      // A rendition of a key that is no image is refused the same way, before any origin is chosen.
      expect((await viewerRequest(uri, 'w=480')).statusCode, `${uri}?w=480`).toBe(404);
    }
    expect(selected).toEqual([]);
  });

  it('answers 404 for a key on the deny-list of taken-down files before the cache, renditions included', async () => {
    const denied = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [KEY]);
    const other = '2026/11/21/1f8fad5b-d9cb-469f-a165-70867728950e.png';

    for (const query of ['', 'w=480&f=webp', 'f=auto&w=1920']) {
      expect((await denied.handler(viewerEvent(`/i/${KEY}`, query))).statusCode, query).toBe(404);
    }
    const served = await denied.handler(viewerEvent(`/i/${other}`));

    // Looked up by the object key, as the takedowns worker lists it; no origin chosen for a denied key.
    // A key not denied is then looked up as held (`h:<key>`).
    expect(denied.lookedUp).toEqual([KEY, KEY, KEY, other, `h:${other}`]);
    expect(denied.selected).toEqual([]);
    expect(served.uri).toBe(`/${other}`);
  });

  it("answers 404 past the end an expiring file's key carries, renditions included, with no look-up", async () => {
    const { handler, selected, lookedUp } = imageKeyFunction();
    const now = Math.floor(Date.now() / 1000);
    const keyEnding = (end: number) =>
      `2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e-9e${'1'.repeat(12)}${'a'.repeat(16)}${expiryMark(end)}.png`;
    const [ended, endsNow, running] = [keyEnding(now - 3600), keyEnding(now), keyEnding(now + 3600)];

    const answers = async (key: string) =>
      Promise.all(
        ['', 'w=480&f=webp', 'p=thumb'].map(
          async (query) => (await handler(viewerEvent(`/i/${key}`, query))).statusCode,
        ),
      );

    expect(ended).toMatch(/-x[0-9a-z]{6}\.png$/);
    expect(await answers(ended)).toEqual([404, 404, 404]);
    expect(await answers(endsNow)).toEqual([404, 404, 404]);
    expect(lookedUp).toEqual([]);
    expect(selected).toEqual([]);
    // Not yet ended: served from its spread prefix, renditions sent on; a key with no end is untouched.
    expect((await handler(viewerEvent(`/i/${running}`))).uri).toBe(`/${objectKeyOf(running)}`);
    expect(objectKeyOf(running)).toBe(`9e/${running}`);
    expect((await handler(viewerEvent(`/i/${running}`, 'w=480'))).uri).toBe(`/i/${running}`);
    expect((await handler(viewerEvent(`/i/${KEY}`))).uri).toBe(`/${KEY}`);
    expect(selected).toEqual(['api']);
  });

  it('answers 451 with a short page for a file held for review, renditions included, before the cache', async () => {
    const held = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [`h:${KEY}`]);
    const other = '2026/11/21/1f8fad5b-d9cb-469f-a165-70867728950e.png';

    for (const query of ['', 'w=480&f=webp', 'p=thumb']) {
      const answer = await held.handler(viewerEvent(`/i/${KEY}`, query));
      expect(answer.statusCode, query).toBe(451);
      expect(answer.body.data, query).toBe(HELD_MESSAGE);
      expect(answer.headers['cache-control'].value, query).toBe('no-store');
    }
    expect(held.selected).toEqual([]);
    expect((await held.handler(viewerEvent(`/i/${other}`))).uri).toBe(`/${other}`);
  });

  it("applies the owner's rules from the store by the tag in the key: stopped is 403, a Referer outside the list 403", async () => {
    const tag = 'a1b2c3d4e5f60718';
    const tagged = `2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e-0123456789ab${tag}.png`;
    const request = (fn: ReturnType<typeof imageKeyFunction>, referer?: string, query = '') =>
      fn.handler(
        viewerEvent(`/i/${tagged}`, query, {
          host: { value: 'img.example.net' },
          ...(referer !== undefined ? { referer: { value: referer } } : {}),
        }),
      );
    const stopped = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], { [`o:${tag}`]: '{"s":"bandwidth"}' });
    const refused = await request(stopped);
    expect(refused.statusCode).toBe(403);
    expect(refused.body.data).toMatch(/bandwidth/);
    expect((await request(stopped, undefined, 'p=thumb')).statusCode).toBe(403);
    expect(stopped.lookedUp).toContain(`o:${tag}`);
    expect(stopped.selected).toEqual([]);

    const listed = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], {
      [`o:${tag}`]: '{"h":["blog.example.org","*.example.com"],"e":false}',
    });
    expect((await request(listed, 'https://blog.example.org/post/1')).uri).toBe(`/${tagged}`);
    expect((await request(listed, 'https://cdn.example.com/')).uri).toBe(`/${tagged}`);
    expect((await request(listed, 'https://img.example.net/console/')).uri).toBe(`/${tagged}`);
    expect((await request(listed, 'https://evil.example.org/')).statusCode).toBe(403);
    expect((await request(listed, 'https://example.com.evil.net/')).statusCode).toBe(403);
    expect((await request(listed)).statusCode).toBe(403);
    // Another owner (no entry) and a key stored before tags are served.
    const untagged = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], {});
    expect((await request(untagged, 'https://evil.example.org/')).uri).toBe(`/${tagged}`);
    expect((await untagged.handler(viewerEvent(`/i/${KEY}`))).uri).toBe(`/${KEY}`);
  });

  it("sends a watermarking plan's owner's originals and renditions to the render function, keyed by the mark", async () => {
    const tag = 'a1b2c3d4e5f60718';
    const tagged = `2026/11/21/0f8fad5b-d9cb-469f-a165-70867728950e-0123456789ab${tag}.png`;
    const later = Date.now() + 86_400_000;
    const marked = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], {
      [`o:${tag}`]: JSON.stringify({ p: 'gold', u: later }),
      'o:plan.gold': '{"w":"abc123"}',
    });
    const original = await marked.handler(viewerEvent(`/i/${tagged}`));
    // Not the bucket: the render function, which marks it; `wm` keys the cache by the mark's version.
    expect(original.uri).toBe(`/i/${tagged}`);
    expect(queryOf(original)).toBe('wm=abc123');
    const rendition = await marked.handler(viewerEvent(`/i/${tagged}`, 'p=thumb'));
    expect(queryOf(rendition)).toBe('p=thumb&wm=abc123');
    expect(marked.selected).toEqual([API_ORIGIN_ID, API_ORIGIN_ID]);

    // A plan without a mark, or a grant that ended: from the bucket as before.
    const unmarked = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], {
      [`o:${tag}`]: JSON.stringify({ p: 'basic' }),
    });
    expect((await unmarked.handler(viewerEvent(`/i/${tagged}`))).uri).toBe(`/${tagged}`);
    const ended = imageKeyFunction(IMAGE_KEY_FUNCTION_CODE, [], {
      [`o:${tag}`]: JSON.stringify({ p: 'gold', u: Date.now() - 1 }),
      'o:plan.gold': '{"w":"abc123"}',
    });
    expect((await ended.handler(viewerEvent(`/i/${tagged}`))).uri).toBe(`/${tagged}`);
  });

  it("applies the deployment's Referer allow-list to every file, tagged or not", async () => {
    const fn = imageKeyFunction(imageKeyFunctionCode({ h: ['example.com'], e: true }));
    const request = (referer?: string) =>
      fn.handler(viewerEvent(`/i/${KEY}`, '', referer ? { referer: { value: referer } } : {}));
    expect((await request('https://example.com/a')).uri).toBe(`/${KEY}`);
    expect((await request()).uri).toBe(`/${KEY}`);
    expect((await request('https://elsewhere.net/')).statusCode).toBe(403);
  });

  it('sends a request with a query to the API origin, its uri kept, its query in one order', async () => {
    const uri = `/i/${KEY}`;
    const cases: Array<[given: string, forwarded: string]> = [
      ['q=75&w=480', 'w=480&q=75'],
      ['w=480&q=75', 'w=480&q=75'],
      // Parameters that are no rendition's are dropped: no cache key of their own, never at the origin.
      ['f=webp&zz=1&fit=cover&aa=2&h=320&w=480&q=90', 'w=480&h=320&fit=cover&q=90&f=webp'],
      ['s=abc&fbclid=x&p=thumb&v=2', 'p=thumb&s=abc'],
      // Repeats are kept, so the function refuses them (400) rather than the edge picking one.
      ['w=960&f=jpeg&w=480', 'w=960&w=480&f=jpeg'],
    ];
    for (const [given, forwarded] of cases) {
      const { handler, selected } = imageKeyFunction();
      const request = await handler(viewerEvent(uri, given, { 'x-accept-class': { value: 'avif' } }));

      expect(selected, given).toEqual([API_ORIGIN_ID]);
      expect(request.uri, given).toBe(uri);
      expect(queryOf(request), given).toBe(forwarded);
      // Not f=auto: whatever the viewer sent as the class is gone, so it cannot split the cache.
      expect(request.headers[ACCEPT_CLASS_HEADER], given).toBeUndefined();
    }
    // Without a query: the bucket (the behaviour's own origin), no class header either.
    const { handler, selected } = imageKeyFunction();
    const original = await handler(viewerEvent(uri, '', { 'x-accept-class': { value: 'avif' } }));
    expect(selected).toEqual([]);
    expect(original.headers[ACCEPT_CLASS_HEADER]).toBeUndefined();
    // Only parameters that are no rendition's (`?fbclid=x`, `?v=2`, `W`): the original from the bucket.
    for (const given of ['fbclid=x', 'v=2&utm_source=a', 'W=480']) {
      const { handler, selected } = imageKeyFunction();
      const request = await handler(viewerEvent(uri, given, {}));
      expect(selected, given).toEqual([]);
      expect(request.uri, given).toBe(`/${KEY}`);
      expect(queryOf(request), given).toBe('');
    }
  });

  it("names f=auto's Accept class at the edge by the render function's own rule", async () => {
    const accepts: Array<[accept: string | undefined, expected: string]> = [
      ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'avif,webp'],
      ['image/webp,*/*', 'webp'],
      ['IMAGE/AVIF', 'avif'],
      ['image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5', 'other'],
      ['*/*', 'other'],
      ['', 'other'],
      [undefined, 'other'],
    ];
    for (const [accept, expected] of accepts) {
      const { handler } = imageKeyFunction();
      const headers = accept === undefined ? {} : { accept: { value: accept } };
      const request = await handler(viewerEvent(`/i/${KEY}`, 'f=auto&w=480', headers));

      expect(request.headers[ACCEPT_CLASS_HEADER], String(accept)).toEqual({ value: expected });
      expect(request.headers[ACCEPT_CLASS_HEADER].value, String(accept)).toBe(acceptClassOf(accept));
    }
  });

  it('reads percent-encoded names and values as the render function does, and forwards each encoded once', async () => {
    const cases: Array<[given: string, forwarded: string, acceptClass: string | undefined]> = [
      // `%66` is `f` to the function: at the edge too, so f=auto is keyed by the Accept class.
      ['%66=auto&w=480', 'w=480&f=auto', 'webp'],
      ['w=480&f=auto', 'w=480&f=auto', 'webp'],
      ['f=%61uto', 'f=auto', 'webp'],
      ['%70=thumb&f=auto', 'p=thumb&f=auto', 'webp'],
      // One name however it is spelt: a repeat, answered 400 by the function under its own key.
      ['%77=480&w=960', 'w=480&w=960', undefined],
      // `%25` is a literal %: the name is `%66`, not f, and is dropped as any other name.
      ['fit=cover&%2566=auto', 'fit=cover', undefined],
      ['w=480&a+b=%E2%9C%93', 'w=480', undefined],
      // Values not percent-encoded UTF-8 are kept as written, so the function reads the same value.
      ['w=480&f=%ZZ', 'w=480&f=%25ZZ', undefined],
    ];
    for (const [given, forwarded, acceptClass] of cases) {
      const { handler } = imageKeyFunction();
      const request = await handler(viewerEvent(`/i/${KEY}`, given, { accept: { value: 'image/webp,*/*' } }));

      expect(queryOf(request), given).toBe(forwarded);
      expect(request.headers[ACCEPT_CLASS_HEADER]?.value, given).toBe(acceptClass);
    }
  });

  it('keys every query by what the render function will render: the same parameters, the same f=auto', async () => {
    const limits = { widths: [...DEFAULT_IMAGE_WIDTHS], qualities: [...DEFAULT_IMAGE_QUALITIES] };
    /** What the function answers a query with: the parameters it renders, or a 400 (naming the first fault). */
    const functionReads = (query: string) => {
      try {
        return parseRenditionQuery(renditionQueryOf(query), limits);
      } catch {
        return 'a 400';
      }
    };
    const names = ['w', 'h', 'fit', 'q', 'f', 'F', '%66', '%77', '%2566', '%ZZ', 'a+b', '%E2%9C%93'];
    const values = ['480', '960', 'auto', '%61uto', 'webp', '75', 'cover', '', '+', '%ZZ', 'a%20b'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...values)), {
          minLength: 1,
          maxLength: 5,
        }),
        async (pairs) => {
          const given = pairs.map(([name, value]) => `${name}=${value}`).join('&');
          const { handler } = imageKeyFunction();
          const request = await handler(viewerEvent(`/i/${KEY}`, given, { accept: { value: 'image/avif' } }));
          const read = functionReads(given);

          // The query the edge forwards (and keys by) is read by the function as the viewer's own.
          expect(functionReads(queryOf(request))).toEqual(read);
          // And a rendition the function renders as f=auto is keyed by the Accept class; no other is.
          if (typeof read !== 'string') {
            expect(request.headers[ACCEPT_CLASS_HEADER]?.value).toBe(
              read.format === 'auto' ? 'avif' : undefined,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('routes /i/* through the image-key function, keyed by the query and the Accept class, forwarding Accept, never Host', () => {
    const images = imageBehaviourOf(dev);
    const [association] = images.FunctionAssociations as Json[];
    expect(images.FunctionAssociations).toHaveLength(1);
    expect(association!.EventType).toBe('viewer-request');
    const fn = dev.resources[association!.FunctionARN['Fn::GetAtt'][0]]!.Properties;
    expect(fn.FunctionCode).toBe(IMAGE_KEY_FUNCTION_CODE);
    expect(fn.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');

    const cache = dev.resources[images.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
    expect(cache.ParametersInCacheKeyAndForwardedToOrigin).toMatchObject({
      QueryStringsConfig: { QueryStringBehavior: 'all' },
      HeadersConfig: { HeaderBehavior: 'whitelist', Headers: [ACCEPT_CLASS_HEADER] },
      CookiesConfig: { CookieBehavior: 'none' },
    });
    expect([cache.MinTTL, cache.DefaultTTL, cache.MaxTTL]).toEqual([0, 24 * 3600, 24 * 3600]);

    const forwarded = dev.resources[images.OriginRequestPolicyId.Ref]!.Properties.OriginRequestPolicyConfig;
    expect(forwarded).toMatchObject({
      QueryStringsConfig: { QueryStringBehavior: 'all' },
      HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['accept'] },
      CookiesConfig: { CookieBehavior: 'none' },
    });
    // Exactly Accept: not every viewer header, so never Host (API Gateway routes by its own host name).
    expect(forwarded.HeadersConfig.Headers).toEqual(['accept']);
  });

  it("selects the distribution's API origin by its id: the one carrying the origin secret, the default behaviour's", async () => {
    const config = distributionConfigOf(dev);
    const { handler, selected } = imageKeyFunction(
      dev.resources[imageBehaviourOf(dev).FunctionAssociations[0].FunctionARN['Fn::GetAtt'][0]]!.Properties
        .FunctionCode,
    );
    await handler(viewerEvent(`/i/${KEY}`, 'w=480'));
    const [id] = selected;
    const origin = (config.Origins as Json[]).find((candidate) => candidate.Id === id);

    expect(id).toBe(config.DefaultCacheBehavior.TargetOriginId);
    expect(origin?.CustomOriginConfig?.OriginProtocolPolicy).toBe('https-only');
    expect(origin?.OriginCustomHeaders.map((header: Json) => header.HeaderName)).toEqual(['x-origin-verify']);
    expect(imageBehaviourOf(dev).TargetOriginId).not.toBe(id);
  });

  it('sends everything else to the API uncached, with every viewer header but Host', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const origin = config.Origins.find(
      (candidate: Json) => candidate.Id === config.DefaultCacheBehavior.TargetOriginId,
    );
    expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(config.DefaultCacheBehavior.CachePolicyId).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
    expect(config.DefaultCacheBehavior.OriginRequestPolicyId).toBe(
      OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
    );
    expect(config.DefaultCacheBehavior.AllowedMethods).toHaveLength(7);
  });

  it('names the viewer address at the edge, over anything the client sent', () => {
    const config = distributionConfigOf(dev);
    const association = (config.DefaultCacheBehavior.FunctionAssociations as Json[])[0]!;
    expect(association.EventType).toBe('viewer-request');
    const [functionId] = association.FunctionARN['Fn::GetAtt'] as [string];
    expect(dev.resources[functionId]!.Properties.FunctionCode).toBe(VIEWER_ADDRESS_FUNCTION);
    // The edge code overwrites whatever the client sent.
    const handler = new Function(`${VIEWER_ADDRESS_FUNCTION}; return handler;`)() as (event: Json) => Json;
    const forged = {
      request: { headers: { 'x-viewer-address': { value: '10.0.0.1' } } },
      viewer: { ip: '203.0.113.9' },
    };
    expect(handler(forged).headers['x-viewer-address']).toEqual({ value: '203.0.113.9' });
  });

  it('gives the CloudFront address to the functions as BASE_URL', () => {
    const [[cdnId]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(dev, group).Environment.Variables.BASE_URL, group).toEqual({
        'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [cdnId, 'DomainName'] }]],
      });
    }
  });
});

describe('HSTS', () => {
  it('sends strict-transport-security for a year with subdomains on the API, images and console behaviours', () => {
    const [[, cdn]] = resourcesOf(dev, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const config = cdn.Properties.DistributionConfig;
    const images = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );

    const consoleBehaviour = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === CONSOLE_PATH_PATTERN,
    );
    for (const [name, behavior] of [
      ['default', config.DefaultCacheBehavior],
      [IMAGE_PATH_PATTERN, images],
      [CONSOLE_PATH_PATTERN, consoleBehaviour],
    ] as const) {
      const policyId = behavior.ResponseHeadersPolicyId.Ref as string;
      const headers = dev.resources[policyId]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
      expect(headers.StrictTransportSecurity, name).toEqual({
        AccessControlMaxAgeSec: 365 * 24 * 3600,
        IncludeSubdomains: true,
        Override: true,
      });
      // What the managed SECURITY_HEADERS policy gave the user-supplied images.
      expect(headers.ContentTypeOptions, name).toEqual({ Override: true });
    }
  });

  it("sandboxes every /i/* answer with the raw-content Content-Security-Policy, over the origin's", () => {
    const config = distributionConfigOf(dev);
    const images = config.CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === IMAGE_PATH_PATTERN,
    );
    const policyOf = (behavior: Json) =>
      dev.resources[behavior.ResponseHeadersPolicyId.Ref as string]!.Properties.ResponseHeadersPolicyConfig
        .SecurityHeadersConfig;

    // The bucket sends no policy, so the edge must: a stored SVG or HTML opened directly runs nothing.
    expect(policyOf(images).ContentSecurityPolicy).toEqual({
      ContentSecurityPolicy: "default-src 'none'; sandbox",
      Override: true,
    });
    // The API's own answers (and its pages' own policies) are not overridden by it.
    expect(policyOf(config.DefaultCacheBehavior).ContentSecurityPolicy).toBeUndefined();
  });
});

describe('custom domain', () => {
  const DOMAIN = 'api.example.com';
  const ZONE_ID = 'Z0123456789ABCDEFGHIJ';
  let withZone: Synth;
  let withoutZone: Synth;

  beforeAll(() => {
    withZone = synth({
      config: stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: {
          ...DEV_FILE.infra,
          domain_name: DOMAIN,
          certificate_arn: CERTIFICATE_ARN,
          hosted_zone_id: ZONE_ID,
        },
      }),
    });
    // The prod shape with a domain: cdk-nag must accept it without the default-certificate acknowledgement.
    withoutZone = synth({
      config: stageConfigFrom(
        'prod',
        completedProd({ infra: { domain_name: DOMAIN, certificate_arn: CERTIFICATE_ARN } }),
      ),
    });
  }, 60_000);

  const distributionConfigOf = (s: Synth): Json =>
    (resourcesOf(s, 'AWS::CloudFront::Distribution')[0]![1] as Json).Properties.DistributionConfig;

  it('gives the distribution the alias, the certificate and TLS 1.2 (2021) at least', () => {
    for (const s of [withZone, withoutZone]) {
      const config = distributionConfigOf(s);
      expect(config.Aliases).toEqual([DOMAIN]);
      expect(config.ViewerCertificate).toEqual({
        AcmCertificateArn: CERTIFICATE_ARN,
        MinimumProtocolVersion: 'TLSv1.2_2021',
        SslSupportMethod: 'sni-only',
      });
    }
    expect(distributionConfigOf(dev).Aliases).toBeUndefined();
  });

  it('gives https://<domain_name> to the functions as BASE_URL, unless infra.base_url says otherwise', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(withZone, group).Environment.Variables.BASE_URL, group).toBe(`https://${DOMAIN}`);
    }
    const explicit = stageConfigFrom('dev', {
      ...DEV_FILE,
      infra: {
        ...DEV_FILE.infra,
        domain_name: DOMAIN,
        certificate_arn: CERTIFICATE_ARN,
        base_url: 'https://x.example.com',
      },
    });
    expect(explicit.infra.baseUrl).toBe('https://x.example.com');
  });

  it('adds the Route 53 alias records only when a hosted zone is named', () => {
    const [[cdnId]] = resourcesOf(withZone, 'AWS::CloudFront::Distribution') as [[string, Json]];
    const records = resourcesOf(withZone, 'AWS::Route53::RecordSet').map(([, record]) => record.Properties);

    expect(records.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of records) {
      expect(record.Name).toBe(`${DOMAIN}.`);
      expect(record.HostedZoneId).toBe(ZONE_ID);
      expect(record.AliasTarget.DNSName).toEqual({ 'Fn::GetAtt': [cdnId, 'DomainName'] });
    }
    expect(resourcesOf(withoutZone, 'AWS::Route53::RecordSet')).toEqual([]);
    expect(resourcesOf(dev, 'AWS::Route53::RecordSet')).toEqual([]);
  });

  it('passes cdk-nag with the custom certificate and no default-certificate acknowledgement', () => {
    expect(withZone.nag.validateScope(withZone.app).violations.map((v) => v.ruleName)).toEqual([]);
    expect(withoutZone.nag.validateScope(withoutZone.app).violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('refuses a domain without a certificate and a certificate without a domain, naming both', () => {
    for (const half of [{ domain_name: DOMAIN }, { certificate_arn: CERTIFICATE_ARN }]) {
      const attempt = () => stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, ...half } });
      expect(attempt).toThrow(StageConfigError);
      expect(attempt).toThrow(/infra\.domain_name and infra\.certificate_arn: set both or neither/);
    }
  });

  it('refuses a certificate outside us-east-1 and a hosted zone without a domain', () => {
    const attempt = () =>
      stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: {
          ...DEV_FILE.infra,
          domain_name: DOMAIN,
          certificate_arn: CERTIFICATE_ARN.replace('us-east-1', 'eu-west-1'),
        },
      });
    expect(attempt).toThrow(/infra\.certificate_arn: must be a certificate in us-east-1/);
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, hosted_zone_id: ZONE_ID } }),
    ).toThrow(/infra\.hosted_zone_id: needs infra\.domain_name/);
  });
});

describe('one front door', () => {
  const secretIdOf = (s: Synth): string =>
    s.stack.getLogicalId(s.stack.originSecret.node.defaultChild as never);
  const apiOriginOf = (s: Synth): Json => {
    const config = distributionConfigOf(s);
    return config.Origins.find((origin: Json) => origin.Id === config.DefaultCacheBehavior.TargetOriginId);
  };
  const proofOf = (s: Synth): Json =>
    apiOriginOf(s).OriginCustomHeaders.find((header: Json) => header.HeaderName === 'x-origin-verify');

  it('generates the origin secret in Secrets Manager as JSON with a current value', () => {
    const secret = dev.resources[secretIdOf(dev)]!;
    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(secret.Properties.GenerateSecretString).toMatchObject({
      SecretStringTemplate: '{}',
      GenerateStringKey: 'current',
      ExcludePunctuation: true,
      PasswordLength: 48,
    });
    expect(secret.Properties.SecretString).toBeUndefined();
  });

  it('sends the secret to the API by a dynamic reference: the template holds no value', () => {
    const value = JSON.stringify(proofOf(dev).HeaderValue);
    expect(value).toMatch(
      /^\{"Fn::Join":\["",\["\{\{resolve:secretsmanager:",\{"Ref":"[A-Za-z0-9]+"\},":SecretString:current::\}\}"\]\]\}$/,
    );
    expect(value).toContain(secretIdOf(dev));
    // Nothing derived from the stack's identity (what the header held before).
    expect(JSON.stringify(dev.template.toJSON())).not.toContain('AWS::StackId');
  });

  it('pins the version the CDN sends when infra.origin_secret_version names one (a rotation)', () => {
    const version = '7f8e9d0c-1b2a-4c3d-9e8f-0a1b2c3d4e5f';
    const rotated = synth({
      config: stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: { ...DEV_FILE.infra, origin_secret_version: version },
      }),
    });
    expect(JSON.stringify(proofOf(rotated).HeaderValue)).toContain(`:SecretString:current::${version}}}`);
    // The functions are untouched by a rotation: same variables, same grants.
    for (const group of FUNCTION_GROUPS) {
      expect(functionOf(rotated, group).Environment.Variables, group).toEqual(
        functionOf(dev, group).Environment.Variables,
      );
    }
  }, 30_000);

  it('lets every function API Gateway reaches read that one secret, and nothing else in Secrets Manager', () => {
    const secretArn = { Ref: secretIdOf(dev) };
    for (const group of FUNCTION_GROUPS) {
      const statements = roleStatements(dev, group).filter((statement) =>
        actionsOf([statement]).some((action) => action.startsWith('secretsmanager:')),
      );
      const env = functionOf(dev, group).Environment.Variables as Json;
      expect(GROUP_NEEDS[group].frontDoor, group).toBe(true);
      expect(statements, group).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'secretsmanager:GetSecretValue',
          Resource: secretArn,
        }),
      ]);
      expect(env.FRONT_DOOR__PROVIDER, group).toBe('secrets-manager');
      expect(env.FRONT_DOOR__SECRET_ID, group).toEqual(secretArn);
      expect(env.HTTP__TRUSTED_PROXY_SECRET, group).toBeUndefined();
    }
  });

  it('holds no literal secret: no environment or header value is anything but a reference', () => {
    const template = JSON.stringify(dev.template.toJSON());
    expect(template).not.toMatch(/"HeaderValue":"[^"{]/);
    expect(template).not.toContain('TRUSTED_PROXY_SECRET');
  });
});

describe('web console at the CDN', () => {
  let withConsole: Synth;

  beforeAll(() => {
    withConsole = synth({ stage: 'dev', consoleDir: consoleBuildFixture() });
  }, 60_000);

  const consoleBehaviourOf = (s: Synth): Json =>
    distributionConfigOf(s).CacheBehaviors.find(
      (behavior: Json) => behavior.PathPattern === CONSOLE_PATH_PATTERN,
    );

  it('answers / with the console page and /console/* from the bucket; every other path stays the API', () => {
    const config = distributionConfigOf(dev);
    expect(config.DefaultRootObject).toBe(CONSOLE_ROOT_OBJECT);
    const behaviour = consoleBehaviourOf(dev);
    const origin = config.Origins.find((candidate: Json) => candidate.Id === behaviour.TargetOriginId);
    expect(origin.S3OriginConfig).toBeDefined();
    expect(origin.DomainName).toEqual({
      'Fn::GetAtt': [
        dev.stack.getLogicalId(dev.stack.bucket.node.defaultChild as never),
        'RegionalDomainName',
      ],
    });
    expect(behaviour.AllowedMethods.sort()).toEqual(['GET', 'HEAD']);
    expect(behaviour.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(config.CacheBehaviors.map((behavior: Json) => behavior.PathPattern).sort()).toEqual(
      [
        CONSOLE_PATH_PATTERN,
        IMAGE_PATH_PATTERN,
        SHARE_IMAGE_PATH_PATTERN,
        SHARE_PAGE_PATH_PATTERN,
        GALLERY_PATH_PATTERN,
      ].sort(),
    );
    expect(config.DefaultCacheBehavior.CachePolicyId).toBe(CachePolicy.CACHING_DISABLED.cachePolicyId);
  });

  it("keeps gallery and share pages at the edge only as long as the API says, a minute at most, a share's images matched first", () => {
    const config = distributionConfigOf(prod);
    const patterns = config.CacheBehaviors.map((behavior: Json) => behavior.PathPattern);
    expect(patterns.indexOf(SHARE_IMAGE_PATH_PATTERN)).toBeLessThan(
      patterns.indexOf(SHARE_PAGE_PATH_PATTERN),
    );
    for (const pattern of [SHARE_PAGE_PATH_PATTERN, GALLERY_PATH_PATTERN]) {
      const behaviour = config.CacheBehaviors.find((candidate: Json) => candidate.PathPattern === pattern);
      const policy = prod.resources[behaviour.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
      expect(policy.MaxTTL, pattern).toBe(PUBLIC_PAGE_MAX_AGE_SECONDS);
      expect(policy.DefaultTTL, pattern).toBe(0);
      expect(policy.ParametersInCacheKeyAndForwardedToOrigin.HeadersConfig.HeaderBehavior, pattern).toBe(
        'none',
      );
      expect(behaviour.TargetOriginId, pattern).toBe(config.DefaultCacheBehavior.TargetOriginId);
      expect(behaviour.OriginRequestPolicyId, pattern).toBe(
        config.DefaultCacheBehavior.OriginRequestPolicyId,
      );
      expect(behaviour.FunctionAssociations, pattern).toEqual(
        config.DefaultCacheBehavior.FunctionAssociations,
      );
    }
  });

  it('serves the console with a strict Content-Security-Policy and HSTS', () => {
    const policyId = consoleBehaviourOf(dev).ResponseHeadersPolicyId.Ref as string;
    const headers = dev.resources[policyId]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    expect(headers.StrictTransportSecurity).toEqual({
      AccessControlMaxAgeSec: 365 * 24 * 3600,
      IncludeSubdomains: true,
      Override: true,
    });
    expect(headers.FrameOptions).toEqual({ FrameOption: 'DENY', Override: true });
    expect(headers.ContentSecurityPolicy.Override).toBe(true);
    // The policy as CloudFront will send it, the bucket's addresses named by their attributes.
    const filesId = dev.stack.getLogicalId(dev.stack.bucket.node.defaultChild as never);
    const value = headers.ContentSecurityPolicy.ContentSecurityPolicy;
    const parts: unknown[] = typeof value === 'string' ? [value] : value['Fn::Join'][1];
    const csp = parts
      .map((part) =>
        typeof part === 'string'
          ? part
          : `<${(part as Json)['Fn::GetAtt'].join('.').replace(filesId, 'Files')}>`,
      )
      .join('');

    expect(csp).toBe(
      [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "font-src 'self'",
        // The API on the same origin, presigned PUTs to this bucket (regional and global name), nothing else.
        "connect-src 'self' https://<Files.RegionalDomainName> https://<Files.DomainName>",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
      ].join('; '),
    );
  });

  it('deploys a web/dist build under console/ (assets immutable, the page revalidated) and invalidates the page', () => {
    const deployments = resourcesOf(withConsole, 'Custom::CDKBucketDeployment').map(
      ([, resource]) => resource.Properties,
    );
    expect(deployments).toHaveLength(2);
    for (const deployment of deployments) {
      expect(deployment.DestinationBucketKeyPrefix).toBe('console/');
      expect(deployment.DestinationBucketName).toEqual({
        Ref: withConsole.stack.getLogicalId(withConsole.stack.bucket.node.defaultChild as never),
      });
    }
    const page = deployments.find((deployment) => deployment.Include?.includes('index.html'))!;
    const assets = deployments.find((deployment) => deployment.Exclude?.includes('index.html'))!;
    expect(page.SystemMetadata['cache-control']).toBe('no-cache');
    expect(page.DistributionPaths).toEqual(['/', '/console/index.html']);
    expect(assets.SystemMetadata['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(assets.Prune).toBe(true);
    expect(withConsole.nag.validateScope(withConsole.app).violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('deploys no console without a build, and says so at synth', () => {
    const unbuilt = synth({ stage: 'dev', consoleDir: join(tmpdir(), 'console-never-built') });
    expect(resourcesOf(dev, 'Custom::CDKBucketDeployment')).toEqual([]);
    expect(resourcesOf(unbuilt, 'Custom::CDKBucketDeployment')).toEqual([]);
    const warnings = unbuilt.app
      .synth()
      .getStackByName(dev.stack.stackName)
      .messages.map((m) => String(m.entry.data));
    expect(warnings.some((message) => message.includes('No web console build'))).toBe(true);
  });
});

describe('WAF', () => {
  const WEB_ACL_ARN = `arn:aws:wafv2:us-east-1:${PROD_ACCOUNT}:global/webacl/edge/0f8fad5b-d9cb-469f-a165-70867728950e`;

  // Prod's default web ACL and its rules: test/infra/stack-guardrails.test.ts.
  it('creates a web ACL in a us-east-1 stage that asks for one, with the limits it names', () => {
    const east = synth({
      config: stageConfigFrom('dev', {
        ...DEV_FILE,
        infra: { ...DEV_FILE.infra, region: 'us-east-1', waf: { rate_limit: 1000, render_rate_limit: 100 } },
      }),
    });
    const [[aclId, acl]] = resourcesOf(east, 'AWS::WAFv2::WebACL') as [[string, Json]];
    expect(acl.Properties.Scope).toBe('CLOUDFRONT');
    expect(acl.Properties.Rules).toContainEqual(
      expect.objectContaining({
        Name: 'rate-per-address',
        Action: { Block: {} },
        Statement: { RateBasedStatement: expect.objectContaining({ AggregateKeyType: 'IP', Limit: 1000 }) },
      }),
    );
    expect(JSON.stringify(acl.Properties.Rules)).toContain('"Limit":100,');
    expect(distributionConfigOf(east).WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(east.nag.validateScope(east.app).violations.map((v) => v.ruleName)).toEqual([]);
  }, 30_000);

  it('attaches an existing ACL by ARN, and creates none where a stage asks for none', () => {
    const attached = synth({
      config: stageConfigFrom('prod', completedProd({ infra: { web_acl_arn: WEB_ACL_ARN } })),
    });
    expect(distributionConfigOf(attached).WebACLId).toBe(WEB_ACL_ARN);
    expect(resourcesOf(attached, 'AWS::WAFv2::WebACL')).toEqual([]);
    expect(distributionConfigOf(dev).WebACLId).toBeUndefined();
    expect(resourcesOf(dev, 'AWS::WAFv2::WebACL')).toEqual([]);
  }, 30_000);

  it('refuses infra.waf outside us-east-1, both WAF settings at once, and an ACL that is not CloudFront-scoped', () => {
    expect(() =>
      stageConfigFrom('prod', completedProd({ infra: { region: 'eu-west-1', waf: { rate_limit: 1000 } } })),
    ).toThrow(
      /infra\.waf: a CloudFront web ACL can only be created in us-east-1, and this stage deploys to eu-west-1; .*infra\.web_acl_arn/,
    );
    expect(() =>
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, waf: { rate_limit: 1000 } } }),
    ).toThrow(/infra\.waf: .*pins no region/);
    expect(() =>
      stageConfigFrom(
        'prod',
        completedProd({
          infra: { region: 'us-east-1', waf: { rate_limit: 1000 }, web_acl_arn: WEB_ACL_ARN },
        }),
      ),
    ).toThrow(/infra\.waf and infra\.web_acl_arn: a distribution takes one web ACL/);
    expect(() =>
      stageConfigFrom(
        'prod',
        completedProd({ infra: { web_acl_arn: WEB_ACL_ARN.replace('global', 'regional') } }),
      ),
    ).toThrow(/infra\.web_acl_arn: must be a CLOUDFRONT-scoped web ACL ARN/);
    expect(() =>
      stageConfigFrom('prod', completedProd({ infra: { region: 'us-east-1', waf: { rate_limit: 5 } } })),
    ).toThrow(StageConfigError);
  });
});
