// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${...} here are CloudFormation Fn::Sub templates
import { describe, expect, it } from 'vitest';
import { type IntrinsicResolver, pseudoParameters, resolveIntrinsics } from '#test/support/deployed/cfn.ts';

const resolver: IntrinsicResolver = {
  ref(logicalId) {
    const known: Record<string, string> = { Table: 'app-table', Bucket: 'app-bucket' };
    if (!known[logicalId]) throw new Error(`unknown logical id ${logicalId}`);
    return known[logicalId];
  },
  getAtt(logicalId, attribute) {
    if (logicalId === 'Table' && attribute === 'Arn')
      return 'arn:aws:dynamodb:us-east-1:123456789012:table/app-table';
    if (logicalId === 'Key' && attribute === 'Arn') return 'arn:aws:kms:us-east-1:123456789012:key/k-1';
    throw new Error(`unknown attribute ${logicalId}.${attribute}`);
  },
  pseudo: pseudoParameters({ region: 'us-east-1', account: '123456789012', stackName: 'Service' }),
};

describe('resolveIntrinsics', () => {
  it('joins refs, attributes and pseudo parameters into an ARN', () => {
    // Prepare
    const value = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':s3:::',
          { Ref: 'Bucket' },
          '/',
          { Ref: 'AWS::AccountId' },
          '/*',
        ],
      ],
    };

    // Act
    const resolved = resolveIntrinsics(value, resolver);

    // Assess
    expect(resolved).toBe('arn:aws:s3:::app-bucket/123456789012/*');
  });

  it('selects from a split string and reads both GetAtt forms', () => {
    // Prepare
    const tableName = { 'Fn::Select': [1, { 'Fn::Split': ['/', { 'Fn::GetAtt': ['Table', 'Arn'] }] }] };
    const keyArn = { 'Fn::GetAtt': 'Key.Arn' };

    // Act / Assess
    expect(resolveIntrinsics(tableName, resolver)).toBe('app-table');
    expect(resolveIntrinsics(keyArn, resolver)).toBe('arn:aws:kms:us-east-1:123456789012:key/k-1');
  });

  it('substitutes names, attributes, pseudo parameters, variables, and leaves ${!Literal} alone', () => {
    // Prepare
    const plain = {
      'Fn::Sub': 'arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:${Table}/${!Not}',
    };
    const withAttribute = { 'Fn::Sub': '${Table.Arn}/index/*' };
    const withVariables = {
      'Fn::Sub': ['${Arn}/stream/${Stack}', { Arn: { 'Fn::GetAtt': ['Table', 'Arn'] }, Stack: 's' }],
    };

    // Act / Assess
    expect(resolveIntrinsics(plain, resolver)).toBe('arn:aws:events:us-east-1:123456789012:app-table/${Not}');
    expect(resolveIntrinsics(withAttribute, resolver)).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/app-table/index/*',
    );
    expect(resolveIntrinsics(withVariables, resolver)).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/app-table/stream/s',
    );
  });

  it('resolves every pseudo parameter', () => {
    // Prepare
    const names = [
      'AWS::Region',
      'AWS::AccountId',
      'AWS::Partition',
      'AWS::StackId',
      'AWS::StackName',
      'AWS::URLSuffix',
    ];

    // Act
    const values = names.map((name) => resolveIntrinsics({ Ref: name }, resolver));

    // Assess
    expect(values).toEqual([
      'us-east-1',
      '123456789012',
      'aws',
      expect.stringMatching(/^arn:aws:cloudformation:us-east-1:123456789012:stack\/Service\//),
      'Service',
      'amazonaws.com',
    ]);
  });

  it('resolves policy documents recursively, leaving plain values as they are', () => {
    // Prepare
    const document = {
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Action: ['dynamodb:Query'], Resource: [{ 'Fn::GetAtt': ['Table', 'Arn'] }] },
      ],
    };

    // Act
    const resolved = resolveIntrinsics(document, resolver);

    // Assess
    expect(resolved).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['dynamodb:Query'],
          Resource: ['arn:aws:dynamodb:us-east-1:123456789012:table/app-table'],
        },
      ],
    });
  });

  it('throws, naming it, on an unknown ref, attribute, pseudo parameter or intrinsic', () => {
    expect(() => resolveIntrinsics({ Ref: 'Missing' }, resolver)).toThrow(/Missing/);
    expect(() => resolveIntrinsics({ 'Fn::Sub': '${Missing}' }, resolver)).toThrow(/Missing/);
    expect(() => resolveIntrinsics({ 'Fn::GetAtt': ['Table', 'StreamArn'] }, resolver)).toThrow(/StreamArn/);
    expect(() => resolveIntrinsics({ Ref: 'AWS::NoValue' }, resolver)).toThrow(/AWS::NoValue/);
    expect(() => resolveIntrinsics({ 'Fn::ImportValue': 'x' }, resolver)).toThrow(/Fn::ImportValue/);
    expect(() => resolveIntrinsics({ 'Fn::Select': [3, ['a']] }, resolver)).toThrow(/Fn::Select/);
  });

  it('asks the resolver for a pseudo parameter it was not given', () => {
    // Prepare
    const bare: IntrinsicResolver = {
      ref: (name) => (name === 'AWS::Region' ? 'eu-central-1' : `?${name}`),
      getAtt: () => '',
    };

    // Act / Assess
    expect(resolveIntrinsics({ Ref: 'AWS::Region' }, bare)).toBe('eu-central-1');
  });
});
