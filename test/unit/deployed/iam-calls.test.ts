import { describe, expect, it } from 'vitest';
import { createFakeKms } from '#test/support/deployed/fake-kms.ts';
import { type AwsRequest, iamCallsOf } from '#test/support/deployed/iam-calls.ts';

const WHERE = { region: 'us-east-1', account: '123456789012' };
const TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/app';
const KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

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

const dynamo = (operation: string, body: unknown) =>
  iamCallsOf(
    signed('dynamodb', {
      headers: { 'x-amz-target': `DynamoDB_20120810.${operation}` },
      body: JSON.stringify(body),
    }),
    WHERE,
  );
const kms = (operation: string, body: unknown) =>
  iamCallsOf(
    signed('kms', { headers: { 'x-amz-target': `TrentService.${operation}` }, body: JSON.stringify(body) }),
    WHERE,
  );

describe('iamCallsOf: DynamoDB', () => {
  it('maps an item operation to its action on the table ARN, with its partition key as the leading key', () => {
    expect(dynamo('GetItem', { TableName: 'app', Key: { pk: { S: 'a' } } })).toEqual({
      service: 'dynamodb',
      operation: 'GetItem',
      calls: [{ action: 'dynamodb:GetItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['a'] } }],
    });
    expect(
      dynamo('PutItem', { TableName: 'app', Item: { pk: { S: 'RENDITION#x' }, sk: { S: 'CLAIM' } } }).calls,
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['RENDITION#x'] } },
    ]);
  });

  it('maps a Query on an index to the index ARN', () => {
    expect(dynamo('Query', { TableName: 'app', IndexName: 'owner' }).calls).toEqual([
      { action: 'dynamodb:Query', resource: `${TABLE}/index/owner` },
    ]);
  });

  it('authorises TransactWriteItems item by item, each by its own action, each pair once', () => {
    // Prepare
    const body = {
      TransactItems: [
        { Put: { TableName: 'app', Item: {} } },
        { Put: { TableName: 'app', Item: {} } },
        { Update: { TableName: 'app', Key: {} } },
        { Delete: { TableName: 'other', Key: {} } },
        { ConditionCheck: { TableName: 'app', Key: {}, ConditionExpression: 'attribute_exists(pk)' } },
      ],
    };

    // Act
    const found = dynamo('TransactWriteItems', body);

    // Assess
    expect(found.calls).toEqual([
      { action: 'dynamodb:PutItem', resource: TABLE },
      { action: 'dynamodb:UpdateItem', resource: TABLE },
      { action: 'dynamodb:DeleteItem', resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/other' },
      { action: 'dynamodb:ConditionCheckItem', resource: TABLE },
    ]);
  });

  it('maps TransactGetItems to GetItem and batch operations to one call per table', () => {
    expect(
      dynamo('TransactGetItems', { TransactItems: [{ Get: { TableName: 'app', Key: {} } }] }).calls,
    ).toEqual([{ action: 'dynamodb:GetItem', resource: TABLE }]);
    expect(
      dynamo('BatchGetItem', { RequestItems: { app: { Keys: [] }, other: { Keys: [] } } }).calls,
    ).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: TABLE },
      { action: 'dynamodb:BatchGetItem', resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/other' },
    ]);
  });

  it('marks an operation it does not know as unrecognised', () => {
    expect(dynamo('ExecuteStatement', { Statement: 'SELECT * FROM app' }).calls).toEqual([
      { action: 'dynamodb:Unknown(POST /)', resource: '*', unrecognised: true },
    ]);
  });
});

describe('iamCallsOf: KMS, EventBridge, SES', () => {
  it('maps key operations to the key ARN, from a full ARN or a bare key id', () => {
    expect(kms('GenerateDataKey', { KeyId: KEY, KeySpec: 'AES_256' }).calls).toEqual([
      { action: 'kms:GenerateDataKey', resource: KEY },
    ]);
    expect(kms('DescribeKey', { KeyId: '1234abcd-12ab-34cd-56ef-1234567890ab' }).calls).toEqual([
      { action: 'kms:DescribeKey', resource: KEY },
    ]);
  });

  it('maps a Decrypt without KeyId to the key its ciphertext names', () => {
    // Prepare
    const fake = createFakeKms({ keyArns: [KEY] });
    const { body } = fake.handle('GenerateDataKey', { KeyId: KEY, KeySpec: 'AES_256' });
    const blob = (body as { CiphertextBlob: string }).CiphertextBlob;

    // Act
    const found = kms('Decrypt', { CiphertextBlob: blob });

    // Assess
    expect(found.calls).toEqual([{ action: 'kms:Decrypt', resource: KEY }]);
  });

  it('maps PutEvents to one call per distinct bus, the default bus when none is named', () => {
    // Prepare
    const entries = [
      { EventBusName: 'orders', Source: 's', DetailType: 't', Detail: '{}' },
      { EventBusName: 'orders', Source: 's', DetailType: 't', Detail: '{}' },
      { Source: 's', DetailType: 't', Detail: '{}' },
      {
        EventBusName: 'arn:aws:events:eu-west-1:999999999999:event-bus/x',
        Source: 's',
        DetailType: 't',
        Detail: '{}',
      },
    ];
    const request = signed('events', {
      headers: { 'x-amz-target': 'AWSEvents.PutEvents' },
      body: JSON.stringify({ Entries: entries }),
    });

    // Act
    const found = iamCallsOf(request, WHERE);

    // Assess
    expect(found.calls).toEqual([
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:123456789012:event-bus/orders' },
      { action: 'events:PutEvents', resource: 'arn:aws:events:us-east-1:123456789012:event-bus/default' },
      { action: 'events:PutEvents', resource: 'arn:aws:events:eu-west-1:999999999999:event-bus/x' },
    ]);
  });

  it('maps SES v1 SendEmail and SendRawEmail to the domain identity of the sender', () => {
    // Prepare
    const sendEmail = new URLSearchParams({
      Action: 'SendEmail',
      Version: '2010-12-01',
      Source: '"Shop" <no-reply@Mail.Example.com>',
    });
    const raw = Buffer.from('From: Shop <a@raw.example>\r\nTo: b@c.d\r\n\r\nFrom: not@this.one').toString(
      'base64',
    );
    const sendRaw = new URLSearchParams({ Action: 'SendRawEmail', 'RawMessage.Data': raw });

    // Act
    const v1 = iamCallsOf(signed('email', { body: sendEmail.toString() }), WHERE);
    const v1Raw = iamCallsOf(signed('ses', { body: sendRaw.toString() }), WHERE);

    // Assess
    expect(v1).toEqual({
      service: 'ses',
      operation: 'SendEmail',
      calls: [
        { action: 'ses:SendEmail', resource: 'arn:aws:ses:us-east-1:123456789012:identity/mail.example.com' },
      ],
    });
    expect(v1Raw.calls).toEqual([
      { action: 'ses:SendRawEmail', resource: 'arn:aws:ses:us-east-1:123456789012:identity/raw.example' },
    ]);
  });

  it('maps SES v2 SendEmail by FromEmailAddress', () => {
    // Prepare
    const request = signed('ses', {
      url: '/v2/email/outbound-emails',
      body: JSON.stringify({ FromEmailAddress: 'me@example.org', Content: {} }),
    });

    // Act / Assess
    expect(iamCallsOf(request, WHERE).calls).toEqual([
      { action: 'ses:SendEmail', resource: 'arn:aws:ses:us-east-1:123456789012:identity/example.org' },
    ]);
  });

  it('marks an unsigned request and a service nobody serves as unrecognised', () => {
    // Prepare
    const unsigned: AwsRequest = { method: 'GET', url: '/b/k', headers: {}, body: Buffer.alloc(0) };

    // Act
    const anonymous = iamCallsOf(unsigned, WHERE);
    const sqs = iamCallsOf(signed('sqs', { body: 'Action=SendMessage' }), WHERE);

    // Assess
    expect(anonymous).toEqual({
      service: 'unsigned',
      operation: 'Unsigned',
      calls: [{ action: 'unsigned request', resource: 'GET /b/k', unrecognised: true }],
    });
    expect(sqs.calls).toEqual([{ action: 'sqs:Unknown(POST /)', resource: '*', unrecognised: true }]);
  });
});
