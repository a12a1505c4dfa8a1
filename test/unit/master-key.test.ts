import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createKmsMasterKey } from '#lib/platform/crypto/kms-key.ts';
import { createLocalMasterKey } from '#lib/platform/crypto/local-key.ts';
import { DecryptionError, type MasterKey } from '#lib/platform/crypto/master-key.ts';

function tamper(ciphertext: string): string {
  const parts = ciphertext.split('.');
  const body = Buffer.from(parts[4]!, 'base64url');
  body[0]! ^= 0x01;
  parts[4] = body.toString('base64url');
  return parts.join('.');
}

const kmsMock = mockClient(KMSClient);
// Stands in for KMS: the "encrypted" data key is the plaintext XOR a fixed pad, so Decrypt can undo it.
const pad = randomBytes(32);
const wrap = (key: Uint8Array) => Buffer.from(key.map((byte, index) => byte ^ pad[index]!));

function contractTests(name: string, make: () => MasterKey) {
  describe(name, () => {
    it('round-trips with the same context', async () => {
      const key = make();
      const sealed = await key.encrypt('JBSWY3DPEHPK3PXP', { purpose: 'totp', account: 'a1' });
      expect(sealed).toMatch(/^v1\./);
      expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
      expect((await key.decrypt(sealed, { account: 'a1', purpose: 'totp' })).toString()).toBe(
        'JBSWY3DPEHPK3PXP',
      );
    });

    it('rejects a tampered ciphertext', async () => {
      const key = make();
      const sealed = await key.encrypt('secret', { purpose: 'totp' });
      await expect(key.decrypt(tamper(sealed), { purpose: 'totp' })).rejects.toBeInstanceOf(DecryptionError);
      await expect(key.decrypt('v1.garbage', { purpose: 'totp' })).rejects.toBeInstanceOf(DecryptionError);
    });

    it('rejects a wrong context', async () => {
      const key = make();
      const sealed = await key.encrypt('secret', { purpose: 'totp', account: 'a1' });
      await expect(key.decrypt(sealed, { purpose: 'totp', account: 'a2' })).rejects.toBeInstanceOf(
        DecryptionError,
      );
      await expect(key.decrypt(sealed, { purpose: 'payment' })).rejects.toBeInstanceOf(DecryptionError);
    });

    it('uses a fresh nonce for every encryption', async () => {
      const key = make();
      const [a, b] = await Promise.all([key.encrypt('same', {}), key.encrypt('same', {})]);
      expect(a).not.toBe(b);
    });
  });
}

contractTests('local master key', () => createLocalMasterKey(randomBytes(32)));

describe('local master key rotation', () => {
  it('refuses a ciphertext sealed with another key', async () => {
    const sealed = await createLocalMasterKey(randomBytes(32)).encrypt('secret', {});
    await expect(createLocalMasterKey(randomBytes(32)).decrypt(sealed, {})).rejects.toBeInstanceOf(
      DecryptionError,
    );
  });
});

describe('KMS master key', () => {
  beforeEach(() => {
    kmsMock.reset();
    kmsMock.on(GenerateDataKeyCommand).callsFake(() => {
      const plaintext = randomBytes(32);
      return { Plaintext: plaintext, CiphertextBlob: wrap(plaintext), KeyId: 'key-1' };
    });
    kmsMock.on(DecryptCommand).callsFake((input: { CiphertextBlob: Uint8Array }) => ({
      Plaintext: wrap(input.CiphertextBlob),
    }));
  });

  contractTests('contract', () => createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1'));

  it('asks KMS for one data key per container and keeps the data key out of the ciphertext', async () => {
    const key = createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1');
    const sealed = await Promise.all([1, 2, 3].map((n) => key.encrypt(`s${n}`, { n: String(n) })));
    expect(kmsMock.commandCalls(GenerateDataKeyCommand)).toHaveLength(1);
    expect(kmsMock.commandCalls(GenerateDataKeyCommand)[0]!.args[0].input).toMatchObject({
      KeyId: 'key-1',
      KeySpec: 'AES_256',
    });
    const plaintextKey = (await kmsMock.commandCalls(GenerateDataKeyCommand)[0]!.returnValue) as unknown as {
      Plaintext: Buffer;
    };
    for (const text of sealed)
      expect(text).not.toContain(Buffer.from(plaintextKey.Plaintext).toString('base64url'));
  });

  it("decrypts another container's ciphertext through KMS Decrypt, once per data key", async () => {
    const writer = createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1');
    const sealed = await writer.encrypt('payment-secret', { purpose: 'payment' });
    const reader = createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1');
    expect((await reader.decrypt(sealed, { purpose: 'payment' })).toString()).toBe('payment-secret');
    await reader.decrypt(sealed, { purpose: 'payment' });
    expect(kmsMock.commandCalls(DecryptCommand)).toHaveLength(1);
  });

  it('maps a refused data key to a DecryptionError', async () => {
    const sealed = await createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1').encrypt('x', {});
    kmsMock
      .on(DecryptCommand)
      .rejects(Object.assign(new Error('bad'), { name: 'InvalidCiphertextException' }));
    const reader = createKmsMasterKey(new KMSClient({ region: 'us-east-1' }), 'key-1');
    await expect(reader.decrypt(sealed, {})).rejects.toBeInstanceOf(DecryptionError);
  });
});
