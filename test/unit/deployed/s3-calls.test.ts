import { describe, expect, it } from 'vitest';
import { type AwsRequest, iamCallsOf } from '#test/support/deployed/iam-calls.ts';

const WHERE = { region: 'us-east-1', account: '123456789012' };

function signed(
  service: string,
  init: { method?: string; url?: string; headers?: Record<string, string>; body?: string } = {},
): AwsRequest {
  const authorization = `AWS4-HMAC-SHA256 Credential=S3RVER/20261122/us-east-1/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`;
  return {
    method: init.method ?? 'POST',
    url: init.url ?? '/',
    headers: { authorization, ...init.headers },
    body: Buffer.from(init.body ?? ''),
  };
}

const s3 = (method: string, url: string, headers: Record<string, string> = {}, body = '') =>
  iamCallsOf(signed('s3', { method, url, headers, body }), WHERE);

describe('iamCallsOf: S3', () => {
  it('maps GET and HEAD of an object to GetObject on its URL-decoded key', () => {
    expect(s3('GET', '/b/a%20b/c%2B.png?x-id=GetObject')).toEqual({
      service: 's3',
      operation: 'GetObject',
      calls: [{ action: 's3:GetObject', resource: 'arn:aws:s3:::b/a b/c+.png' }],
    });
    expect(s3('HEAD', '/b/k').calls).toEqual([{ action: 's3:GetObject', resource: 'arn:aws:s3:::b/k' }]);
  });

  it('maps CopyObject to PutObject on the target and GetObject on the source', () => {
    // Act
    const plain = s3('PUT', '/b/to/k', { 'x-amz-copy-source': 'src/from/my%20file.png' });
    const versioned = s3('PUT', '/b/to/k', { 'x-amz-copy-source': '/src/from/f.png?versionId=v1' });

    // Assess
    expect(plain.operation).toBe('CopyObject');
    expect(plain.calls).toEqual([
      { action: 's3:PutObject', resource: 'arn:aws:s3:::b/to/k' },
      { action: 's3:GetObject', resource: 'arn:aws:s3:::src/from/my file.png' },
    ]);
    expect(versioned.calls).toContainEqual({
      action: 's3:GetObjectVersion',
      resource: 'arn:aws:s3:::src/from/f.png',
    });
  });

  it('maps a presigned PUT, which has no Authorization header, by its X-Amz-Credential', () => {
    // Prepare
    const query = new URLSearchParams({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'S3RVER/20261122/us-east-1/s3/aws4_request',
      'X-Amz-Date': '20261122T000000Z',
      'X-Amz-Expires': '900',
      'X-Amz-SignedHeaders': 'host',
      'X-Amz-Signature': '00',
      'x-id': 'PutObject',
    });
    const request: AwsRequest = {
      method: 'PUT',
      url: `/b/up/k.png?${query}`,
      headers: {},
      body: Buffer.from('x'),
    };

    // Act
    const found = iamCallsOf(request, WHERE);

    // Assess
    expect(found.calls).toEqual([{ action: 's3:PutObject', resource: 'arn:aws:s3:::b/up/k.png' }]);
  });

  it('maps a multi-object delete to DeleteObject on every key of the body', () => {
    // Prepare
    const body =
      '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
      '<Object><Key>a&amp;b.txt</Key></Object><Object><Key>dir/c</Key></Object><Quiet>true</Quiet></Delete>';

    // Act
    const found = s3('POST', '/b?delete', {}, body);

    // Assess
    expect(found.operation).toBe('DeleteObjects');
    expect(found.calls).toEqual([
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a&b.txt' },
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/dir/c' },
    ]);
  });

  it('maps the multipart upload steps to PutObject and the abort to AbortMultipartUpload', () => {
    expect(s3('POST', '/b/k?uploads').calls).toEqual([
      { action: 's3:PutObject', resource: 'arn:aws:s3:::b/k' },
    ]);
    expect(s3('PUT', '/b/k?partNumber=1&uploadId=u').operation).toBe('UploadPart');
    expect(s3('POST', '/b/k?uploadId=u').calls).toEqual([
      { action: 's3:PutObject', resource: 'arn:aws:s3:::b/k' },
    ]);
    expect(s3('DELETE', '/b/k?uploadId=u').calls).toEqual([
      { action: 's3:AbortMultipartUpload', resource: 'arn:aws:s3:::b/k' },
    ]);
    expect(s3('DELETE', '/b/k').calls).toEqual([{ action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/k' }]);
  });

  it('maps bucket requests to actions on the bucket ARN', () => {
    // A listing carries its prefix, which a condition on `s3:prefix` tests.
    expect(s3('GET', '/b?list-type=2&prefix=up%2F').calls).toEqual([
      { action: 's3:ListBucket', resource: 'arn:aws:s3:::b', context: { 's3:prefix': 'up/' } },
    ]);
    expect(s3('HEAD', '/b').calls).toEqual([{ action: 's3:ListBucket', resource: 'arn:aws:s3:::b' }]);
    expect(s3('PUT', '/b?cors').calls).toEqual([{ action: 's3:PutBucketCORS', resource: 'arn:aws:s3:::b' }]);
    expect(s3('PUT', '/b').calls).toEqual([{ action: 's3:CreateBucket', resource: 'arn:aws:s3:::b' }]);
  });

  it('keeps dot segments and leading slashes of a key as they are, as S3 does', () => {
    expect(s3('GET', '/b/a/../k').calls).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/a/../k' },
    ]);
    expect(s3('GET', '//b/k').calls).toEqual([
      { action: 's3:Unknown(GET //b/k)', resource: '*', unrecognised: true },
    ]);
    expect(s3('PUT', '/b//k').calls).toEqual([{ action: 's3:PutObject', resource: 'arn:aws:s3:::b//k' }]);
  });

  it('marks a sub-resource it does not know as unrecognised', () => {
    expect(s3('GET', '/b/k?tagging').calls).toEqual([
      { action: 's3:Unknown(GET /b/k)', resource: '*', unrecognised: true },
    ]);
  });
});
