// One front door (docs/DEPLOYMENT.md "One front door"): the CDN adds `x-origin-verify: <origin secret>` to
// every request it sends to the API; a function behind API Gateway serves nothing without it, so a call
// straight to the execute-api address is refused. The secret is read where it lives (Secrets Manager in
// AWS, a file in the data folder locally) and cached for a while, so a rotated value is picked up without
// a redeploy; during a rotation both the new value (`current`) and the old one (`previous`) are accepted.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { AppError, errors } from '#lib/core/errors.ts';
import { sameSecret } from '#lib/platform/crypto/same-secret.ts';
import { log } from '#lib/platform/log.ts';
import { recordMetric } from '#lib/platform/observability/metrics.ts';
import { type ApiEvent, type ApiResult, ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from './event.ts';

/** The secret's JSON: the value the CDN sends now, and while a rotation settles, the one it sent before. */
export interface OriginSecrets {
  current: string;
  previous?: string;
}

/**
 * Where a function finds the origin secret (cached by the source itself); `undefined`: this function runs
 * without a CDN in front (in-process tests, provider `none`) and checks nothing.
 */
export type OriginSecretsSource = () => Promise<OriginSecrets | undefined>;

export interface FrontDoorOptions {
  /** The origin secret the CDN proves itself with (lib/wiring/front-door.ts builds it from the need). */
  frontDoor?: OriginSecretsSource;
  /**
   * The group's own Lambda function URL is a second front door (the payment callback's notify address:
   * each notification proves itself by the channel's signature). Requests that arrived there are served
   * without the CDN's proof; through API Gateway the proof is still required.
   */
  functionUrlIsFrontDoor?: boolean;
}

/** Where the local runner keeps the secret (like the local master key): the local server sends it. */
export const LOCAL_ORIGIN_SECRET_FILE = 'origin-secret.json';

/** A value shorter than this is not a secret worth the name (GenerateSecretString makes 48 characters). */
const MIN_SECRET_LENGTH = 32;

/** The secret's JSON, checked; the error never repeats the value. */
export function parseOriginSecrets(text: string): OriginSecrets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('the origin secret is not JSON of the form {"current": "...", "previous"?: "..."}');
  }
  return originSecretsOf(parsed);
}

export function originSecretsOf(value: unknown): OriginSecrets {
  const { current, previous } = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  if (typeof current !== 'string' || current.length < MIN_SECRET_LENGTH)
    throw new Error(
      `the origin secret's "current" must be a string of at least ${MIN_SECRET_LENGTH} characters`,
    );
  if (previous !== undefined && (typeof previous !== 'string' || previous.length < MIN_SECRET_LENGTH))
    throw new Error(
      `the origin secret's "previous" must be absent or at least ${MIN_SECRET_LENGTH} characters`,
    );
  return previous === undefined ? { current } : { current, previous };
}

/** Whether `proof` is the current value or, during a rotation, the previous one. */
export function acceptsProof(secrets: OriginSecrets, proof: string | undefined): boolean {
  if (!proof) return false;
  // Both compared every time, so the answer's timing does not tell which one matched.
  const current = sameSecret(proof, secrets.current);
  const previous = secrets.previous !== undefined && sameSecret(proof, secrets.previous);
  return current || previous;
}

/**
 * A reader cached for `maxAgeSeconds`: a rotated value is seen within that time; a failed read is not
 * cached, so the next request tries again.
 */
export function cachedOriginSecrets(
  read: () => Promise<OriginSecrets>,
  maxAgeSeconds: number,
  now: () => number = Date.now,
): () => Promise<OriginSecrets> {
  let cached: { value: OriginSecrets; until: number } | undefined;
  let pending: Promise<OriginSecrets> | undefined;
  return async () => {
    if (cached && now() < cached.until) return cached.value;
    pending ??= read()
      .then((value) => {
        cached = { value, until: now() + maxAgeSeconds * 1000 };
        return value;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}

/** The local secret file (LOCAL_ORIGIN_SECRET_FILE), read again after `maxAgeSeconds`. */
export function fileOriginSecrets(file: string, maxAgeSeconds: number): () => Promise<OriginSecrets> {
  return cachedOriginSecrets(async () => parseOriginSecrets(await readFile(file, 'utf8')), maxAgeSeconds);
}

const REFUSED_MESSAGE = 'Requests reach this service only through its public address';

/**
 * The middy step that keeps the front door: without the source it does nothing. A request without a
 * valid proof is answered 403 before any routing, body parsing or authentication (chosen over 404: the
 * caller is told plainly to use the public address, and nothing about the routes or the proof is said).
 * A request with it has the proof taken out and its client address set to the viewer's as the CDN named
 * it (the CDN overwrites that header, so only a request with the proof can be believed about it).
 */
export function frontDoorCheck(
  source?: OriginSecretsSource,
  options: Pick<FrontDoorOptions, 'functionUrlIsFrontDoor'> = {},
): MiddlewareObj<ApiEvent, ApiResult, Error, Context> {
  return {
    before: async (request) => {
      if (!source) return;
      if (options.functionUrlIsFrontDoor && arrivedAtFunctionUrl(request.event)) {
        // No CDN in front of a function URL: nothing it would name about the viewer can be believed.
        stripEdgeHeaders(request.event.headers ?? {});
        return;
      }
      let secrets: OriginSecrets | undefined;
      try {
        secrets = await source();
      } catch (error) {
        if (error instanceof AppError) throw error;
        log.error('origin secret unreadable', { error_name: (error as Error)?.name });
        throw errors.serviceUnavailable('The service is briefly unavailable; try again shortly');
      }
      if (!secrets) return;
      const headers = request.event.headers ?? {};
      const proof = headerOf(headers, ORIGIN_VERIFY_HEADER);
      if (!acceptsProof(secrets, proof)) {
        const reason = proof ? 'mismatch' : 'missing';
        log.warn('request refused at the front door', { reason });
        recordMetric('FrontDoorRefused', { dimensions: { reason } });
        throw errors.forbidden(REFUSED_MESSAGE);
      }
      const viewer = headerOf(headers, VIEWER_ADDRESS_HEADER);
      if (viewer && isIP(viewer) !== 0) request.event.requestContext.http.sourceIp = viewer;
      // Routes never see the proof, nor an address claim they might trust by mistake.
      stripEdgeHeaders(headers);
    },
  };
}

function stripEdgeHeaders(headers: Record<string, string | undefined>): void {
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === ORIGIN_VERIFY_HEADER || lower === VIEWER_ADDRESS_HEADER) delete headers[name];
  }
}

/**
 * Whether Lambda's function URL delivered the event: its domain is `<url-id>.lambda-url.<region>.on.aws`.
 * The domain is the one the request arrived on, set by AWS (API Gateway's is its execute-api or custom
 * domain), so a caller cannot claim it.
 */
export function arrivedAtFunctionUrl(event: ApiEvent): boolean {
  return /\.lambda-url\.[a-z0-9-]+\.on\.aws$/.test(event.requestContext?.domainName ?? '');
}

function headerOf(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}
