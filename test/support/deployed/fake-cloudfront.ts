// An in-process stand-in for CloudFront's REST-XML CreateInvalidation, recording what was invalidated where.
import { randomBytes } from 'node:crypto';

export interface RecordedInvalidation {
  distributionId: string;
  id: string;
  callerReference: string;
  paths: string[];
}

export interface FakeCloudFrontAnswer {
  status: number;
  headers: Record<string, string>;
  /** XML */
  body: string;
}

export interface FakeCloudFront {
  readonly invalidations: RecordedInvalidation[];
  handle(operation: string, distributionId: string, body: Buffer): FakeCloudFrontAnswer;
}

const XMLNS = 'http://cloudfront.amazonaws.com/doc/2020-05-31/';
/** CloudFront's limit on wildcard paths in invalidations in progress, per distribution. */
const MAX_WILDCARD_PATHS_IN_FLIGHT = 15;

function xmlEscape(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}

function xmlText(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_whole, entity: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    if (entity.startsWith('#')) {
      const hex = entity[1] === 'x' || entity[1] === 'X';
      return String.fromCodePoint(Number.parseInt(entity.slice(hex ? 2 : 1), hex ? 16 : 10));
    }
    return named[entity.toLowerCase()] ?? '';
  });
}

const element = (xml: string, name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml)?.[1];

/** CloudFront's error document (REST-XML), which the SDK reads its error name from. */
export function cloudFrontError(status: number, code: string, message: string): FakeCloudFrontAnswer {
  const body = `<?xml version="1.0"?>\n<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomBytes(8).toString('hex')}</RequestId></ErrorResponse>`;
  return { status, headers: { 'content-type': 'text/xml' }, body };
}

/** Invalidation ids look like CloudFront's: `I` and 13 upper-case characters. */
function invalidationId(): string {
  return `I${randomBytes(10)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, '')
    .toUpperCase()
    .padEnd(13, 'X')
    .slice(0, 13)}`;
}

/** `distributionIds`: the distributions that exist; any other id is NoSuchDistribution, as in AWS. */
export function createFakeCloudFront(options: { distributionIds: string[] }): FakeCloudFront {
  const invalidations: RecordedInvalidation[] = [];
  const known = new Set(options.distributionIds);

  function create(distributionId: string, body: Buffer): FakeCloudFrontAnswer {
    if (!known.has(distributionId)) {
      return cloudFrontError(404, 'NoSuchDistribution', 'The specified distribution does not exist.');
    }
    const xml = body.toString('utf8');
    const batch = element(xml, 'InvalidationBatch') ?? (xml.includes('<Paths>') ? xml : undefined);
    const callerReference = batch && element(batch, 'CallerReference');
    const quantity = batch ? Number(element(batch, 'Quantity')) : Number.NaN;
    const paths = [...(batch ?? '').matchAll(/<Path>([\s\S]*?)<\/Path>/g)].map(([, path = '']) =>
      xmlText(path),
    );
    if (!batch || !callerReference) {
      return cloudFrontError(400, 'MissingBody', 'An InvalidationBatch with a CallerReference is required.');
    }
    if (quantity !== paths.length || paths.length === 0) {
      return cloudFrontError(400, 'InconsistentQuantities', 'Quantity does not match the number of paths.');
    }
    if (paths.some((path) => !path.startsWith('/'))) {
      return cloudFrontError(400, 'InvalidArgument', 'Every path must begin with a slash.');
    }
    // CloudFront's `*` may only end a path, and 15 wildcard paths at most are in flight per distribution
    // (this stand-in completes each batch at once, so one batch is all that is in flight).
    if (paths.some((path) => path.slice(0, -1).includes('*'))) {
      return cloudFrontError(400, 'InvalidArgument', 'A wildcard (*) may only end a path.');
    }
    if (paths.filter((path) => path.endsWith('*')).length > MAX_WILDCARD_PATHS_IN_FLIGHT) {
      return cloudFrontError(
        400,
        'TooManyInvalidationsInProgress',
        'You have exceeded the maximum number of allowable InProgress wildcard invalidation batch requests.',
      );
    }
    const earlier = invalidations.find(
      (item) => item.distributionId === distributionId && item.callerReference === callerReference,
    );
    if (earlier && earlier.paths.join('\n') !== paths.join('\n')) {
      return cloudFrontError(
        409,
        'InvalidationBatchAlreadyExists',
        'The CallerReference was used for a different batch.',
      );
    }
    const recorded = earlier ?? { distributionId, id: invalidationId(), callerReference, paths };
    if (!earlier) invalidations.push(recorded);
    const items = recorded.paths.map((path) => `<Path>${xmlEscape(path)}</Path>`).join('');
    const answer = `<?xml version="1.0"?>\n<Invalidation xmlns="${XMLNS}"><Id>${recorded.id}</Id><Status>InProgress</Status><CreateTime>${new Date().toISOString()}</CreateTime><InvalidationBatch><Paths><Quantity>${recorded.paths.length}</Quantity><Items>${items}</Items></Paths><CallerReference>${xmlEscape(recorded.callerReference)}</CallerReference></InvalidationBatch></Invalidation>`;
    return {
      status: 201,
      headers: {
        'content-type': 'text/xml',
        location: `https://cloudfront.amazonaws.com/2020-05-31/distribution/${distributionId}/invalidation/${recorded.id}`,
      },
      body: answer,
    };
  }

  return {
    invalidations,
    handle(operation, distributionId, body) {
      if (operation !== 'CreateInvalidation') {
        return cloudFrontError(400, 'InvalidAction', `Fake CloudFront has no ${operation}`);
      }
      return create(distributionId, body);
    },
  };
}
