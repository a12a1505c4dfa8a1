// CloudFront in the deployed-shape gateway: which IAM action and resource an invalidation is, and the fake
// that answers the allowed ones (by itself and through the gateway with the AWS SDK).
import { CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';
import { describe, expect, it } from 'vitest';
import { createFakeCloudFront } from '#test/support/deployed/fake-cloudfront.ts';
import type { PolicyStatement } from '#test/support/deployed/iam.ts';
import { type AwsRequest, iamCallsOf } from '#test/support/deployed/iam-calls.ts';
import { ACCOUNT, CLIENT, client, DISTRIBUTION, REGION, setup } from './harness.ts';

const WHERE = { region: REGION, account: ACCOUNT };
const ARN = `arn:aws:cloudfront::${ACCOUNT}:distribution/${DISTRIBUTION}`;

function signed(service: string, method: string, url: string): AwsRequest {
  const authorization = `AWS4-HMAC-SHA256 Credential=S3RVER/20261122/us-east-1/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`;
  return { method, url, headers: { authorization }, body: Buffer.alloc(0) };
}

function batch(paths: string[], reference = 'ref-1', quantity = paths.length): Buffer {
  const items = paths.map((path) => `<Path>${path}</Path>`).join('');
  return Buffer.from(
    `<InvalidationBatch xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Paths><Quantity>${quantity}</Quantity><Items>${items}</Items></Paths><CallerReference>${reference}</CallerReference></InvalidationBatch>`,
  );
}

describe('iamCallsOf: CloudFront', () => {
  it('maps POST .../distribution/<Id>/invalidation to CreateInvalidation on the regionless distribution ARN', () => {
    const found = iamCallsOf(
      signed('cloudfront', 'POST', `/2020-05-31/distribution/${DISTRIBUTION}/invalidation`),
      WHERE,
    );

    expect(found).toEqual({
      service: 'cloudfront',
      operation: 'CreateInvalidation',
      calls: [{ action: 'cloudfront:CreateInvalidation', resource: ARN }],
    });
  });

  it('marks any other CloudFront request unrecognised, so it is denied whatever the policy', () => {
    const others = [
      signed('cloudfront', 'GET', `/2020-05-31/distribution/${DISTRIBUTION}/invalidation`),
      signed('cloudfront', 'POST', `/2020-05-31/distribution/${DISTRIBUTION}/invalidation/extra`),
      signed('cloudfront', 'POST', `/2019-03-26/distribution/${DISTRIBUTION}/invalidation`),
      signed('cloudfront', 'GET', `/2020-05-31/distribution/${DISTRIBUTION}`),
    ];

    for (const request of others) {
      const found = iamCallsOf(request, WHERE);
      expect(found.service, request.url).toBe('cloudfront');
      expect(
        found.calls.every((call) => call.unrecognised),
        request.url,
      ).toBe(true);
    }
  });
});

describe('fake CloudFront', () => {
  it('records an invalidation and answers 201 with its Location and the batch', () => {
    const fake = createFakeCloudFront({ distributionIds: [DISTRIBUTION] });

    const answer = fake.handle('CreateInvalidation', DISTRIBUTION, batch(['/i/2026/11/22/a.png']));

    expect(answer.status).toBe(201);
    const id = fake.invalidations[0]!.id;
    expect(answer.headers.location).toBe(
      `https://cloudfront.amazonaws.com/2020-05-31/distribution/${DISTRIBUTION}/invalidation/${id}`,
    );
    expect(answer.body).toContain(`<Id>${id}</Id><Status>InProgress</Status>`);
    expect(answer.body).toContain('<Path>/i/2026/11/22/a.png</Path>');
    expect(fake.invalidations).toEqual([
      { distributionId: DISTRIBUTION, id, callerReference: 'ref-1', paths: ['/i/2026/11/22/a.png'] },
    ]);
  });

  it('refuses an unknown distribution, mismatched quantities and a reused reference, recording nothing new', () => {
    const fake = createFakeCloudFront({ distributionIds: [DISTRIBUTION] });
    fake.handle('CreateInvalidation', DISTRIBUTION, batch(['/i/a'], 'same'));

    const unknown = fake.handle('CreateInvalidation', 'E0OTHER', batch(['/i/a']));
    const mismatched = fake.handle('CreateInvalidation', DISTRIBUTION, batch(['/i/a'], 'r2', 2));
    const reused = fake.handle('CreateInvalidation', DISTRIBUTION, batch(['/i/b'], 'same'));

    expect([unknown.status, mismatched.status, reused.status]).toEqual([404, 400, 409]);
    expect(unknown.body).toContain('<Code>NoSuchDistribution</Code>');
    expect(mismatched.body).toContain('<Code>InconsistentQuantities</Code>');
    expect(reused.body).toContain('<Code>InvalidationBatchAlreadyExists</Code>');
    expect(fake.invalidations).toHaveLength(1);
  });
});

describe('AWS gateway with the AWS SDK: CloudFront', () => {
  const allowed: PolicyStatement[] = [
    { Effect: 'Allow', Action: 'cloudfront:CreateInvalidation', Resource: ARN },
  ];

  it('serves an allowed CreateInvalidation from the fake and records the call', async () => {
    // Prepare
    const { gateway, cloudfront } = await setup(undefined, allowed);
    const sdk = client(CloudFrontClient, { ...CLIENT, endpoint: gateway.endpoint });

    // Act
    const made = await sdk.send(
      new CreateInvalidationCommand({
        DistributionId: DISTRIBUTION,
        InvalidationBatch: { CallerReference: 'r-1', Paths: { Quantity: 1, Items: ['/i/2026/11/22/x.png'] } },
      }),
    );

    // Assess
    expect(made.Invalidation?.Status).toBe('InProgress');
    expect(made.Location).toContain(`/distribution/${DISTRIBUTION}/invalidation/${made.Invalidation?.Id}`);
    expect(made.Invalidation?.InvalidationBatch?.Paths?.Items).toEqual(['/i/2026/11/22/x.png']);
    expect(cloudfront.invalidations.map((item) => item.paths)).toEqual([['/i/2026/11/22/x.png']]);
    expect(gateway.calls).toEqual([
      {
        service: 'cloudfront',
        operation: 'CreateInvalidation',
        action: 'cloudfront:CreateInvalidation',
        resource: ARN,
        allowed: true,
      },
    ]);
    expect(gateway.denials).toEqual([]);
    expect(gateway.errors).toEqual([]);
  });

  it('refuses an invalidation the policy does not grant as AccessDenied, naming the resource', async () => {
    // Prepare
    const { gateway, cloudfront } = await setup(undefined, allowed);
    const sdk = client(CloudFrontClient, { ...CLIENT, endpoint: gateway.endpoint });

    // Act
    const refused = sdk.send(
      new CreateInvalidationCommand({
        DistributionId: 'E9ELSEWHERE',
        InvalidationBatch: { CallerReference: 'r-2', Paths: { Quantity: 1, Items: ['/i/a.png'] } },
      }),
    );

    // Assess
    await expect(refused).rejects.toMatchObject({
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    expect(gateway.denials).toEqual([
      {
        functionName: 'payments',
        action: 'cloudfront:CreateInvalidation',
        resource: `arn:aws:cloudfront::${ACCOUNT}:distribution/E9ELSEWHERE`,
        operation: 'CreateInvalidation',
      },
    ]);
    expect(cloudfront.invalidations).toEqual([]);
  });
});
