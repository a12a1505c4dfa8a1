// The IAM actions and resources of one S3 REST request (path style, signed or presigned).

import type { CallContext } from './iam.ts';

export interface S3Calls {
  operation: string;
  calls: Array<{ action: string; resource: string; context?: CallContext }>;
}

const bucketArn = (bucket: string) => `arn:aws:s3:::${bucket}`;
const objectArn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;

/** Query keys that select no sub-resource: list options, GET response overrides, presign and SDK markers. */
const LIST_OPTIONS = new Set([
  'list-type',
  'prefix',
  'delimiter',
  'max-keys',
  'continuation-token',
  'start-after',
  'fetch-owner',
  'encoding-type',
  'marker',
]);
const OBJECT_OPTIONS = new Set(['versionId', 'partNumber', 'uploadId', 'uploads']);

function isNeutral(name: string): boolean {
  return name === 'x-id' || name.toLowerCase().startsWith('x-amz-') || name.startsWith('response-');
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
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

/** `x-amz-copy-source`: `[/]bucket/key` URL-encoded, maybe `?versionId=`. */
function copySource(header: string): { bucket: string; key: string; versioned: boolean } | undefined {
  const question = header.indexOf('?');
  const path = decode(question < 0 ? header : header.slice(0, question));
  const versioned = question >= 0 && new URLSearchParams(header.slice(question + 1)).has('versionId');
  const trimmed = path?.replace(/^\//, '');
  const slash = trimmed?.indexOf('/') ?? -1;
  if (!trimmed || slash <= 0 || slash === trimmed.length - 1) return undefined;
  return { bucket: trimmed.slice(0, slash), key: trimmed.slice(slash + 1), versioned };
}

/** DeleteObjects body: each `<Object>` with its `<Key>` (and `<VersionId>`, which needs another action). */
function deletedObjects(body: Buffer, bucket: string): Array<{ action: string; resource: string }> {
  const calls: Array<{ action: string; resource: string }> = [];
  for (const [, object = ''] of body.toString('utf8').matchAll(/<Object>([\s\S]*?)<\/Object>/g)) {
    const key = /<Key>([\s\S]*?)<\/Key>/.exec(object)?.[1];
    if (key === undefined) continue;
    const action = /<VersionId>/.test(object) ? 's3:DeleteObjectVersion' : 's3:DeleteObject';
    calls.push({ action, resource: objectArn(bucket, xmlText(key)) });
  }
  return calls;
}

function bucketRequest(
  method: string,
  bucket: string,
  query: URLSearchParams,
  body: Buffer,
): S3Calls | undefined {
  const names = [...query.keys()].filter((name) => !isNeutral(name));
  const only = (name: string) => names.length === 1 && names[0] === name;
  const on = (operation: string, action: string): S3Calls => ({
    operation,
    calls: [{ action, resource: bucketArn(bucket) }],
  });
  if (method === 'GET' && names.every((name) => LIST_OPTIONS.has(name))) {
    // A listing's `s3:prefix` is what a condition on it tests (absent: the empty prefix, as in IAM).
    const listing = on(query.get('list-type') === '2' ? 'ListObjectsV2' : 'ListObjects', 's3:ListBucket');
    const [call] = listing.calls;
    return { ...listing, calls: [{ ...call!, context: { 's3:prefix': query.get('prefix') ?? '' } }] };
  }
  if (method === 'GET' && only('cors')) return on('GetBucketCors', 's3:GetBucketCORS');
  if (method === 'GET' && only('location')) return on('GetBucketLocation', 's3:GetBucketLocation');
  if (method === 'HEAD' && names.length === 0) return on('HeadBucket', 's3:ListBucket');
  if (method === 'PUT' && names.length === 0) return on('CreateBucket', 's3:CreateBucket');
  if (method === 'PUT' && only('cors')) return on('PutBucketCors', 's3:PutBucketCORS');
  // IAM has no DeleteBucketCORS action: removing the configuration is authorised as setting it.
  if (method === 'DELETE' && only('cors')) return on('DeleteBucketCors', 's3:PutBucketCORS');
  if (method === 'DELETE' && names.length === 0) return on('DeleteBucket', 's3:DeleteBucket');
  // A body without a single key is not authorised at all: S3 answers MalformedXML before IAM matters.
  if (method === 'POST' && only('delete'))
    return { operation: 'DeleteObjects', calls: deletedObjects(body, bucket) };
  return undefined;
}

function objectRequest(
  method: string,
  bucket: string,
  key: string,
  query: URLSearchParams,
  headers: (name: string) => string | undefined,
): S3Calls | undefined {
  const names = [...query.keys()].filter((name) => !isNeutral(name));
  if (!names.every((name) => OBJECT_OPTIONS.has(name))) return undefined;
  const target = objectArn(bucket, key);
  const one = (operation: string, action: string): S3Calls => ({
    operation,
    calls: [{ action, resource: target }],
  });
  const part = query.has('uploadId');
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (part) return method === 'GET' ? one('ListParts', 's3:ListMultipartUploadParts') : undefined;
      // A specific version is its own action in IAM.
      return one(
        method === 'GET' ? 'GetObject' : 'HeadObject',
        query.has('versionId') ? 's3:GetObjectVersion' : 's3:GetObject',
      );
    case 'PUT': {
      if (part !== query.has('partNumber')) return undefined;
      const calls = [{ action: 's3:PutObject', resource: target }];
      const copyHeader = headers('x-amz-copy-source');
      if (copyHeader !== undefined) {
        const source = copySource(copyHeader);
        if (!source) return undefined;
        const action = source.versioned ? 's3:GetObjectVersion' : 's3:GetObject';
        calls.push({ action, resource: objectArn(source.bucket, source.key) });
      }
      // Documented extra permissions of PutObject/CopyObject: setting an ACL or tags needs their actions too.
      if (
        !part &&
        (headers('x-amz-acl') !== undefined || headers('x-amz-grant-full-control') !== undefined)
      ) {
        calls.push({ action: 's3:PutObjectAcl', resource: target });
      }
      if (!part && headers('x-amz-tagging') !== undefined) {
        calls.push({ action: 's3:PutObjectTagging', resource: target });
      }
      const copy = copyHeader !== undefined;
      const operation = part ? (copy ? 'UploadPartCopy' : 'UploadPart') : copy ? 'CopyObject' : 'PutObject';
      return { operation, calls };
    }
    case 'POST':
      if (query.has('uploads') && !part) return one('CreateMultipartUpload', 's3:PutObject');
      if (part && !query.has('uploads')) return one('CompleteMultipartUpload', 's3:PutObject');
      return undefined;
    case 'DELETE':
      if (part) return one('AbortMultipartUpload', 's3:AbortMultipartUpload');
      return one('DeleteObject', query.has('versionId') ? 's3:DeleteObjectVersion' : 's3:DeleteObject');
    default:
      return undefined;
  }
}

/**
 * Path-style S3 request -> IAM calls, or undefined when it is not one this mapping knows (the caller then
 * denies it as unrecognised). Not modelled: copying a source's tags (s3:GetObjectTagging), access points.
 */
export function s3Calls(
  method: string,
  pathname: string,
  query: URLSearchParams,
  headers: (name: string) => string | undefined,
  body: Buffer,
): S3Calls | undefined {
  const rest = pathname.replace(/^\//, '');
  const slash = rest.indexOf('/');
  const bucket = decode(slash < 0 ? rest : rest.slice(0, slash));
  const key = slash < 0 ? '' : decode(rest.slice(slash + 1));
  if (bucket === undefined || key === undefined) return undefined;
  if (bucket === '') {
    const listing = method === 'GET' && slash < 0 && [...query.keys()].every(isNeutral);
    return listing
      ? { operation: 'ListBuckets', calls: [{ action: 's3:ListAllMyBuckets', resource: '*' }] }
      : undefined;
  }
  return key === ''
    ? bucketRequest(method, bucket, query, body)
    : objectRequest(method, bucket, key, query, headers);
}
