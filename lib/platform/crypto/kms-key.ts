// KMS envelope encryption: one data key per container from GenerateDataKey; the KMS key never leaves KMS.
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { DecryptionError, type MasterKey, openWith, parseCiphertext, sealWith } from './master-key.ts';

// Binds data keys to this use, so a data key cannot be decrypted through KMS for another purpose.
const DATA_KEY_CONTEXT = { purpose: 'service-master-key' };
const MAX_CACHED_KEYS = 64;

export function createKmsMasterKey(kms: KMSClient, keyId: string): MasterKey {
  let current: Promise<{ key: Buffer; keyRef: string }> | undefined;
  const opened = new Map<string, Promise<Buffer>>();

  const generate = async () => {
    const { Plaintext, CiphertextBlob } = await kms.send(
      new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: DATA_KEY_CONTEXT }),
    );
    if (!Plaintext || !CiphertextBlob) throw new Error('KMS returned no data key');
    const keyRef = Buffer.from(CiphertextBlob).toString('base64url');
    const key = Buffer.from(Plaintext);
    opened.set(keyRef, Promise.resolve(key));
    return { key, keyRef };
  };

  const currentDataKey = () => {
    current ??= generate().catch((error: unknown) => {
      current = undefined; // a failed call is retried by the next request
      throw error;
    });
    return current;
  };

  const openDataKey = async (keyRef: string): Promise<Buffer> => {
    try {
      const { Plaintext } = await kms.send(
        new DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(keyRef, 'base64url'),
          EncryptionContext: DATA_KEY_CONTEXT,
        }),
      );
      if (!Plaintext) throw new DecryptionError('KMS returned no plaintext');
      return Buffer.from(Plaintext);
    } catch (error) {
      if ((error as { name?: string }).name === 'InvalidCiphertextException') throw new DecryptionError();
      throw error;
    }
  };

  const dataKeyFor = (keyRef: string): Promise<Buffer> => {
    let key = opened.get(keyRef);
    if (!key) {
      if (opened.size >= MAX_CACHED_KEYS) opened.delete(opened.keys().next().value!);
      key = openDataKey(keyRef).catch((error: unknown) => {
        opened.delete(keyRef);
        throw error;
      });
      opened.set(keyRef, key);
    }
    return key;
  };

  return {
    async encrypt(plaintext, context) {
      const { key, keyRef } = await currentDataKey();
      return sealWith(key, { provider: 'kms', keyRef }, plaintext, context);
    },
    async decrypt(ciphertext, context) {
      const parsed = parseCiphertext(ciphertext);
      if (parsed.provider !== 'kms') throw new DecryptionError('ciphertext was sealed with another provider');
      return openWith(await dataKeyFor(parsed.keyRef), parsed, context);
    },
  };
}
