import { describe, expect, it } from 'vitest';
import { describeDenial, isAllowed, type PolicyStatement } from '#test/support/deployed/iam.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/app';

describe('isAllowed', () => {
  it('allows an action on exactly the resource an Allow names', () => {
    // Prepare
    const policy: PolicyStatement[] = [{ Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: TABLE }];

    // Act
    const onTable = isAllowed(policy, 'dynamodb:GetItem', TABLE);
    const onOtherTable = isAllowed(policy, 'dynamodb:GetItem', `${TABLE}-other`);
    const otherAction = isAllowed(policy, 'dynamodb:PutItem', TABLE);

    // Assess
    expect(onTable).toBe(true);
    expect(onOtherTable).toBe(false);
    expect(otherAction).toBe(false);
  });

  it('denies what no statement covers, also with no statements at all', () => {
    expect(isAllowed([], 's3:GetObject', 'arn:aws:s3:::b/k')).toBe(false);
  });

  it('matches a key wildcard across slashes but keeps the bucket fixed', () => {
    // Prepare
    const policy: PolicyStatement[] = [
      { Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' },
    ];

    // Act / Assess
    expect(isAllowed(policy, 's3:GetObject', 'arn:aws:s3:::b/uploads/2026/x.png')).toBe(true);
    expect(isAllowed(policy, 's3:GetObject', 'arn:aws:s3:::bb/x.png')).toBe(false);
    // The object wildcard does not cover the bucket itself.
    expect(isAllowed(policy, 's3:GetObject', 'arn:aws:s3:::b')).toBe(false);
  });

  it('matches `?` as exactly one character and wildcards within one ARN segment', () => {
    // Prepare
    const policy: PolicyStatement[] = [
      { Effect: 'Allow', Action: 'kms:*', Resource: 'arn:aws:kms:*:123456789012:key/k?' },
    ];

    // Act / Assess
    expect(isAllowed(policy, 'kms:Decrypt', 'arn:aws:kms:eu-west-1:123456789012:key/k1')).toBe(true);
    expect(isAllowed(policy, 'kms:Decrypt', 'arn:aws:kms:eu-west-1:123456789012:key/k12')).toBe(false);
    expect(isAllowed(policy, 'kms:Decrypt', 'arn:aws:kms:eu-west-1:999999999999:key/k1')).toBe(false);
  });

  it('compares actions without case but resources with case', () => {
    // Prepare
    const policy: PolicyStatement[] = [{ Effect: 'Allow', Action: 'DynamoDB:getitem', Resource: TABLE }];

    // Act / Assess
    expect(isAllowed(policy, 'dynamodb:GetItem', TABLE)).toBe(true);
    expect(isAllowed(policy, 'dynamodb:GetItem', TABLE.toUpperCase())).toBe(false);
  });

  it('lets an explicit Deny win over any Allow, whatever the order', () => {
    // Prepare
    const allow: PolicyStatement = { Effect: 'Allow', Action: 's3:*', Resource: '*' };
    const deny: PolicyStatement = { Effect: 'Deny', Action: 's3:DeleteObject', Resource: 'arn:aws:s3:::b/*' };

    // Act / Assess
    expect(isAllowed([allow, deny], 's3:DeleteObject', 'arn:aws:s3:::b/k')).toBe(false);
    expect(isAllowed([deny, allow], 's3:DeleteObject', 'arn:aws:s3:::b/k')).toBe(false);
    expect(isAllowed([deny, allow], 's3:PutObject', 'arn:aws:s3:::b/k')).toBe(true);
  });

  it('refuses to evaluate statements with Condition, NotAction or NotResource, naming the statement', () => {
    // Prepare
    const conditional: PolicyStatement = {
      Sid: 'OnlyTagged',
      Effect: 'Allow',
      Action: 's3:GetObject',
      Resource: '*',
      Condition: { StringEquals: { 's3:ExistingObjectTag/x': 'y' } },
    };
    const notAction: PolicyStatement = { Effect: 'Allow', NotAction: 'iam:*', Resource: '*' };
    const notResource: PolicyStatement = { Effect: 'Deny', Action: 's3:*', NotResource: 'arn:aws:s3:::b/*' };

    // Act / Assess
    expect(() => isAllowed([conditional], 's3:GetObject', 'arn:aws:s3:::b/k')).toThrow(
      /OnlyTagged.*Condition/,
    );
    expect(() => isAllowed([notAction], 's3:GetObject', 'arn:aws:s3:::b/k')).toThrow(/NotAction/);
    expect(() => isAllowed([notResource], 's3:GetObject', 'arn:aws:s3:::b/k')).toThrow(/NotResource/);
  });

  it('holds a statement to its ForAllValues:StringLike dynamodb:LeadingKeys condition', () => {
    // Prepare
    const policy: PolicyStatement[] = [
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Resource: TABLE,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RENDITION#*'] } },
      },
    ];
    const keys = (...leading: string[]) => ({ 'dynamodb:LeadingKeys': leading });

    // Act / Assess
    expect(isAllowed(policy, 'dynamodb:PutItem', TABLE, keys('RENDITION#abc'))).toBe(true);
    expect(isAllowed(policy, 'dynamodb:GetItem', TABLE, keys('ACCOUNT#1'))).toBe(false);
    expect(isAllowed(policy, 'dynamodb:GetItem', TABLE, keys('RENDITION#a', 'ACCOUNT#1'))).toBe(false);
    // As in IAM, a request naming no leading key passes a ForAllValues test.
    expect(isAllowed(policy, 'dynamodb:GetItem', TABLE)).toBe(true);
    // Any other condition is still refused.
    const otherCondition = { ...policy[0]!, Condition: { StringLike: { 'dynamodb:LeadingKeys': ['x*'] } } };
    expect(() => isAllowed([otherCondition], 'dynamodb:GetItem', TABLE)).toThrow(/Condition/);
  });

  it('holds a listing to its StringLike s3:prefix condition', () => {
    const bucket = 'arn:aws:s3:::logs';
    const policy: PolicyStatement[] = [
      {
        Effect: 'Allow',
        Action: 's3:ListBucket',
        Resource: bucket,
        Condition: { StringLike: { 's3:prefix': ['cdn/*'] } },
      },
    ];

    expect(isAllowed(policy, 's3:ListBucket', bucket, { 's3:prefix': 'cdn/2026-11-28' })).toBe(true);
    expect(isAllowed(policy, 's3:ListBucket', bucket, { 's3:prefix': 'files-bucket/' })).toBe(false);
    // A listing of the whole bucket names the empty prefix, outside `cdn/*`.
    expect(isAllowed(policy, 's3:ListBucket', bucket, { 's3:prefix': '' })).toBe(false);
    expect(isAllowed(policy, 's3:ListBucket', bucket)).toBe(false);
  });

  it('refuses unresolved intrinsics and resource patterns that are not ARNs', () => {
    // Prepare
    const unresolved = { Effect: 'Allow', Action: 's3:GetObject', Resource: { Ref: 'Bucket' } };
    const notArn: PolicyStatement = { Effect: 'Allow', Action: 's3:GetObject', Resource: 'my-bucket/*' };

    // Act / Assess
    expect(() => isAllowed([unresolved as never], 's3:GetObject', 'arn:aws:s3:::b/k')).toThrow(/non-string/);
    expect(() => isAllowed([notArn], 's3:GetObject', 'arn:aws:s3:::b/k')).toThrow(/my-bucket/);
  });
});

describe('describeDenial', () => {
  it('words the refusal as AWS does, naming the function, action and resource', () => {
    expect(describeDenial('files', 's3:PutObject', 'arn:aws:s3:::b/k')).toBe(
      'User: files is not authorized to perform: s3:PutObject on resource: arn:aws:s3:::b/k',
    );
  });
});
