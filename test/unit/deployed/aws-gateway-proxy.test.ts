import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, type Answer, CLIENT, client, REGION, setup, TABLE } from './harness.ts';

describe('AWS gateway with the AWS SDK: forwarding to the stand-ins', () => {
  it('forwards an allowed DynamoDB call unchanged but for the host, and refuses an index it was not granted', async () => {
    // Prepare
    const { gateway, upstream } = await setup(() => ({
      status: 200,
      headers: { 'content-type': 'application/x-amz-json-1.0' },
      body: '{"Item":{"pk":{"S":"a"}}}',
    }));
    const sdk = client(DynamoDBClient, { ...CLIENT, endpoint: gateway.endpoint });

    // Act
    const got = await sdk.send(new GetItemCommand({ TableName: 'app', Key: { pk: { S: 'a' } } }));
    const onIndex = sdk.send(
      new QueryCommand({
        TableName: 'app',
        IndexName: 'owner',
        KeyConditionExpression: 'g = :g',
        ExpressionAttributeValues: { ':g': { S: 'x' } },
      }),
    );

    // Assess
    expect(got.Item).toEqual({ pk: { S: 'a' } });
    await expect(onIndex).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(upstream.seen).toHaveLength(1);
    const [forwarded] = upstream.seen;
    expect(forwarded).toMatchObject({ method: 'POST', url: '/' });
    expect(forwarded?.headers.host).toBe(new URL(upstream.endpoint).host);
    expect(forwarded?.headers['x-amz-target']).toBe('DynamoDB_20120810.GetItem');
    expect(forwarded?.headers.authorization).toMatch(/Credential=S3RVER\/\d{8}\/us-east-1\/dynamodb\//);
    expect(JSON.parse(forwarded?.body ?? '')).toEqual({ TableName: 'app', Key: { pk: { S: 'a' } } });
    expect(gateway.denials).toEqual([
      {
        functionName: 'payments',
        action: 'dynamodb:Query',
        resource: `${TABLE}/index/owner`,
        operation: 'Query',
      },
    ]);
  });

  it('proxies allowed S3 object calls, presigned ones too, and refuses others as S3 does', async () => {
    // Prepare
    const { gateway, upstream } = await setup(
      (seen): Answer =>
        seen.method === 'GET'
          ? { status: 200, headers: { 'content-type': 'text/plain', etag: '"e"' }, body: 'stored' }
          : { status: 200, headers: { etag: '"e"' } },
    );
    const sdk = client(S3Client, {
      ...CLIENT,
      endpoint: gateway.endpoint,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });

    // Act
    await sdk.send(new PutObjectCommand({ Bucket: 'files', Key: 'up/a b.txt', Body: 'hello' }));
    const got = await sdk.send(new GetObjectCommand({ Bucket: 'files', Key: 'up/a b.txt' }));
    const body = await got.Body?.transformToString();
    const presigned = await getSignedUrl(sdk, new PutObjectCommand({ Bucket: 'files', Key: 'direct.png' }), {
      expiresIn: 60,
    });
    const direct = await fetch(presigned, { method: 'PUT', body: 'png' });
    const refused = sdk.send(new GetObjectCommand({ Bucket: 'private', Key: 'k' }));

    // Assess
    expect(body).toBe('stored');
    expect(direct.status).toBe(200);
    await expect(refused).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(upstream.seen.map((seen) => `${seen.method} ${seen.url.split('?')[0]} ${seen.body}`)).toEqual([
      'PUT /files/up/a%20b.txt hello',
      'GET /files/up/a%20b.txt ',
      'PUT /files/direct.png png',
    ]);
    expect(gateway.denials).toEqual([
      {
        functionName: 'payments',
        action: 's3:GetObject',
        resource: 'arn:aws:s3:::private/k',
        operation: 'GetObject',
      },
    ]);
  });

  it('forwards SES mail from a granted identity and refuses mail from another', async () => {
    // Prepare
    const { gateway, upstream } = await setup(() => ({
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body:
        '<SendEmailResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><SendEmailResult><MessageId>m-1</MessageId>' +
        '</SendEmailResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></SendEmailResponse>',
    }));
    const sdk = client(SESClient, { ...CLIENT, endpoint: gateway.endpoint });
    const mail = (source: string) =>
      new SendEmailCommand({
        Source: source,
        Destination: { ToAddresses: ['to@example.net'] },
        Message: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } },
      });

    // Act
    const sent = await sdk.send(mail('Shop <no-reply@example.com>'));
    const refused = sdk.send(mail('no-reply@other.example'));

    // Assess
    expect(sent.MessageId).toBe('m-1');
    await expect(refused).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect(upstream.seen).toHaveLength(1);
    expect(gateway.denials).toEqual([
      {
        functionName: 'payments',
        action: 'ses:SendEmail',
        resource: `arn:aws:ses:${REGION}:${ACCOUNT}:identity/other.example`,
        operation: 'SendEmail',
      },
    ]);
  });
});
