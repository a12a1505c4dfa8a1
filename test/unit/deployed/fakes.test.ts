import { describe, expect, it } from 'vitest';
import { createFakeEventBridge } from '#test/support/deployed/fake-eventbridge.ts';
import { createFakeKms, keyArnOfCiphertext, newKeyArn } from '#test/support/deployed/fake-kms.ts';

const KEY = newKeyArn('us-east-1', '123456789012');
const OTHER_KEY = newKeyArn('us-east-1', '123456789012');
const CONTEXT = { purpose: 'data-key', app: 'service' };

interface DataKey {
  KeyId: string;
  CiphertextBlob: string;
  Plaintext: string;
}

describe('fake KMS', () => {
  it('decrypts a data key under the same context, in any key order, naming the key', () => {
    // Prepare
    const kms = createFakeKms({ keyArns: [KEY] });
    const generated = kms.handle('GenerateDataKey', {
      KeyId: KEY,
      KeySpec: 'AES_256',
      EncryptionContext: CONTEXT,
    });
    const dataKey = generated.body as DataKey;

    // Act
    const decrypted = kms.handle('Decrypt', {
      KeyId: KEY,
      CiphertextBlob: dataKey.CiphertextBlob,
      EncryptionContext: { app: 'service', purpose: 'data-key' },
    });

    // Assess
    expect(generated.status).toBe(200);
    expect(Buffer.from(dataKey.Plaintext, 'base64')).toHaveLength(32);
    expect(dataKey.KeyId).toBe(KEY);
    expect(keyArnOfCiphertext(dataKey.CiphertextBlob)).toBe(KEY);
    expect(decrypted).toEqual({
      status: 200,
      body: { KeyId: KEY, Plaintext: dataKey.Plaintext, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' },
    });
    expect(kms.counts).toEqual({ GenerateDataKey: 1, Decrypt: 1 });
  });

  it('round-trips Encrypt and Decrypt without a KeyId, and honours NumberOfBytes', () => {
    // Prepare
    const kms = createFakeKms({ keyArns: [KEY] });
    const plaintext = Buffer.from('a secret').toString('base64');

    // Act
    const encrypted = kms.handle('Encrypt', { KeyId: KEY, Plaintext: plaintext }).body as DataKey;
    const decrypted = kms.handle('Decrypt', { CiphertextBlob: encrypted.CiphertextBlob }).body as DataKey;
    const short = kms.handle('GenerateDataKey', { KeyId: KEY, NumberOfBytes: 7 }).body as DataKey;

    // Assess
    expect(decrypted.Plaintext).toBe(plaintext);
    expect(Buffer.from(short.Plaintext, 'base64')).toHaveLength(7);
  });

  it('refuses a Decrypt whose context differs from the one it was sealed with', () => {
    // Prepare
    const kms = createFakeKms({ keyArns: [KEY] });
    const { CiphertextBlob } = kms.handle('GenerateDataKey', {
      KeyId: KEY,
      KeySpec: 'AES_256',
      EncryptionContext: CONTEXT,
    }).body as DataKey;

    // Act
    const otherValue = kms.handle('Decrypt', {
      KeyId: KEY,
      CiphertextBlob,
      EncryptionContext: { ...CONTEXT, app: 'x' },
    });
    const none = kms.handle('Decrypt', { KeyId: KEY, CiphertextBlob });
    const extra = kms.handle('Decrypt', {
      KeyId: KEY,
      CiphertextBlob,
      EncryptionContext: { ...CONTEXT, more: '1' },
    });

    // Assess
    for (const answer of [otherValue, none, extra]) {
      expect(answer).toEqual({
        status: 400,
        body: expect.objectContaining({ __type: 'InvalidCiphertextException' }),
      });
    }
  });

  it('refuses a Decrypt naming another key than the ciphertext, and keys it does not hold', () => {
    // Prepare
    const kms = createFakeKms({ keyArns: [KEY, OTHER_KEY] });
    const { CiphertextBlob } = kms.handle('GenerateDataKey', { KeyId: KEY, KeySpec: 'AES_256' })
      .body as DataKey;
    const unknownKey = newKeyArn('us-east-1', '123456789012');

    // Act
    const wrongKey = kms.handle('Decrypt', { KeyId: OTHER_KEY, CiphertextBlob });
    const missingKey = kms.handle('GenerateDataKey', { KeyId: unknownKey, KeySpec: 'AES_256' });
    const foreignBlob = createFakeKms({ keyArns: [KEY] }).handle('Decrypt', { CiphertextBlob });

    // Assess
    expect(wrongKey.body).toEqual(expect.objectContaining({ __type: 'IncorrectKeyException' }));
    expect(missingKey.body).toEqual(expect.objectContaining({ __type: 'NotFoundException' }));
    // Same key ARN, another secret: a blob of another KMS never opens here.
    expect(foreignBlob.body).toEqual(expect.objectContaining({ __type: 'InvalidCiphertextException' }));
  });

  it('describes a key found by its bare id', () => {
    // Prepare
    const kms = createFakeKms({ keyArns: [KEY] });
    const keyId = KEY.split('/')[1];

    // Act
    const answer = kms.handle('DescribeKey', { KeyId: keyId });

    // Assess
    expect(answer.body).toEqual({
      KeyMetadata: expect.objectContaining({ KeyId: keyId, Arn: KEY, Enabled: true, KeyState: 'Enabled' }),
    });
  });
});

describe('fake EventBridge', () => {
  it('records the events it accepts, per bus, and fails incomplete entries one by one', () => {
    // Prepare
    const events = createFakeEventBridge();
    const entries = [
      {
        EventBusName: 'orders',
        Source: 'app.payments',
        DetailType: 'order.paid',
        Detail: '{"id":"o-1"}',
        Time: 1_800_000_000,
      },
      { Source: 'app.payments', DetailType: 'order.paid' },
      {
        EventBusName: 'arn:aws:events:us-east-1:123456789012:event-bus/orders',
        Source: 's',
        DetailType: 't',
        Detail: '{}',
      },
    ];

    // Act
    const answer = events.handle('PutEvents', { Entries: entries });

    // Assess
    const body = answer.body as { FailedEntryCount: number; Entries: Array<Record<string, string>> };
    expect(answer.status).toBe(200);
    expect(body.FailedEntryCount).toBe(1);
    expect(body.Entries[0]).toEqual({ EventId: expect.any(String) });
    expect(body.Entries[1]).toEqual(expect.objectContaining({ ErrorCode: 'InvalidArgument' }));
    expect(events.events).toEqual([
      {
        bus: 'orders',
        source: 'app.payments',
        detailType: 'order.paid',
        detail: { id: 'o-1' },
        time: new Date(1_800_000_000_000).toISOString(),
      },
      { bus: 'orders', source: 's', detailType: 't', detail: {}, time: expect.any(String) },
    ]);
  });

  it('refuses a PutEvents without entries', () => {
    expect(createFakeEventBridge().handle('PutEvents', { Entries: [] })).toEqual({
      status: 400,
      body: expect.objectContaining({ __type: 'ValidationException' }),
    });
  });
});
