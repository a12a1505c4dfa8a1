import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startAwsGateway } from '#test/support/deployed/aws-gateway.ts';
import { createFakeEventBridge } from '#test/support/deployed/fake-eventbridge.ts';
import { createFakeKms, newKeyArn } from '#test/support/deployed/fake-kms.ts';
import type { PolicyStatement } from '#test/support/deployed/iam.ts';
import { ACCOUNT, CLIENT, client, KEY, REGION, setup } from './harness.ts';

describe('AWS gateway with the AWS SDK: policy, fakes, lifecycle', () => {
  it('serves GenerateDataKey then Decrypt from the fake KMS when the policy allows them', async () => {
    // Prepare
    const { gateway, kms } = await setup();
    const sdk = client(KMSClient, { ...CLIENT, endpoint: gateway.endpoint });
    const context = { purpose: 'data-key' };

    // Act
    const dataKey = await sdk.send(
      new GenerateDataKeyCommand({ KeyId: KEY, KeySpec: 'AES_256', EncryptionContext: context }),
    );
    const opened = await sdk.send(
      new DecryptCommand({ KeyId: KEY, CiphertextBlob: dataKey.CiphertextBlob, EncryptionContext: context }),
    );
    const wrongContext = sdk.send(
      new DecryptCommand({
        KeyId: KEY,
        CiphertextBlob: dataKey.CiphertextBlob,
        EncryptionContext: { purpose: 'x' },
      }),
    );

    // Assess
    expect(dataKey.KeyId).toBe(KEY);
    expect(Buffer.from(opened.Plaintext!)).toEqual(Buffer.from(dataKey.Plaintext!));
    await expect(wrongContext).rejects.toMatchObject({ name: 'InvalidCiphertextException' });
    expect(kms.counts).toEqual({ GenerateDataKey: 1, Decrypt: 2 });
    expect(gateway.denials).toEqual([]);
    expect(gateway.calls[0]).toEqual({
      service: 'kms',
      operation: 'GenerateDataKey',
      action: 'kms:GenerateDataKey',
      resource: KEY,
      allowed: true,
    });
    expect(gateway.errors).toEqual([]);
  });

  it('refuses PutEvents to a bus the policy does not cover and records the denial', async () => {
    // Prepare
    const { gateway, events } = await setup();
    const sdk = client(EventBridgeClient, { ...CLIENT, endpoint: gateway.endpoint });
    const entry = { Source: 'app.payments', DetailType: 'order.paid', Detail: '{"id":"o-1"}' };

    // Act
    const accepted = await sdk.send(
      new PutEventsCommand({ Entries: [{ ...entry, EventBusName: 'orders' }] }),
    );
    const refused = sdk.send(new PutEventsCommand({ Entries: [{ ...entry, EventBusName: 'audit' }] }));

    // Assess
    const auditBus = `arn:aws:events:${REGION}:${ACCOUNT}:event-bus/audit`;
    expect(accepted.FailedEntryCount).toBe(0);
    await expect(refused).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: `User: payments is not authorized to perform: events:PutEvents on resource: ${auditBus}`,
      $metadata: { httpStatusCode: 400 },
    });
    expect(gateway.denials).toEqual([
      { functionName: 'payments', action: 'events:PutEvents', resource: auditBus, operation: 'PutEvents' },
    ]);
    expect(events.events.map((event) => event.bus)).toEqual(['orders']);
  });

  it('refuses a KMS operation the policy lacks before the fake KMS sees it', async () => {
    // Prepare
    const { gateway, kms } = await setup();
    const sdk = client(KMSClient, { ...CLIENT, endpoint: gateway.endpoint });

    // Act
    const refused = sdk.send(
      new GenerateDataKeyCommand({ KeyId: newKeyArn(REGION, ACCOUNT), KeySpec: 'AES_256' }),
    );

    // Assess
    await expect(refused).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(gateway.denials).toHaveLength(1);
    expect(kms.counts).toEqual({});
  });

  it('refuses an unsigned request', async () => {
    // Prepare
    const { gateway, upstream } = await setup();

    // Act
    const answer = await fetch(`${gateway.endpoint}/files/up/a.txt`);

    // Assess
    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain('<Code>AccessDenied</Code>');
    expect(upstream.seen).toEqual([]);
    expect(gateway.denials).toEqual([
      {
        functionName: 'payments',
        action: 'unsigned request',
        resource: 'GET /files/up/a.txt',
        operation: 'Unsigned',
      },
    ]);
  });

  it('refuses a request it cannot map even when the policy allows everything', async () => {
    // Prepare
    const { gateway, upstream } = await setup(undefined, [{ Effect: 'Allow', Action: '*', Resource: '*' }]);
    const authorization =
      'AWS4-HMAC-SHA256 Credential=S3RVER/20261122/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00';

    // Act
    const answer = await fetch(`${gateway.endpoint}/files/k?tagging`, { headers: { authorization } });

    // Assess
    expect(answer.status).toBe(403);
    expect(upstream.seen).toEqual([]);
    expect(gateway.calls).toEqual([
      {
        service: 's3',
        operation: 'Unknown',
        action: 's3:Unknown(GET /files/k)',
        resource: '*',
        allowed: false,
      },
    ]);
  });

  it('closes promptly while a forwarded request is still open', async () => {
    // Prepare
    const { gateway, upstream } = await setup(() => 'hang');
    const sdk = client(S3Client, { ...CLIENT, endpoint: gateway.endpoint, forcePathStyle: true });
    const pending = sdk.send(new GetObjectCommand({ Bucket: 'files', Key: 'slow' }));
    pending.catch(() => undefined);
    await expect.poll(() => upstream.seen.length).toBe(1);

    // Act
    const started = Date.now();
    await gateway.close();

    // Assess
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
  });

  it('refuses at start a policy it cannot evaluate', async () => {
    // Prepare
    const policy: PolicyStatement[] = [
      { Effect: 'Allow', Action: 's3:*', Resource: '*', Condition: { Bool: {} } },
    ];

    // Act
    const starting = startAwsGateway({
      functionName: 'payments',
      policy,
      region: REGION,
      account: ACCOUNT,
      upstream: { dynamodb: 'http://127.0.0.1:1', s3: 'http://127.0.0.1:1' },
      kms: createFakeKms({ keyArns: [] }),
      events: createFakeEventBridge(),
    });

    // Assess
    await expect(starting).rejects.toThrow(/Condition/);
  });
});
