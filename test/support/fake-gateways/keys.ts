// Throw-away RSA key pairs in every encoding the channels accept (generation is slow: once per test file).

import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';

export interface TestKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  privateKeyPkcs8Pem: string;
  privateKeyPkcs1Pem: string;
  /** The base64 body of the PKCS#8 DER, as Alipay's key tool prints it. */
  privateKeyBase64: string;
  publicKeyPem: string;
  /** The base64 body of the SPKI DER. */
  publicKeyBase64: string;
}

export function generateTestKeyPair(): TestKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    publicKey,
    privateKeyPkcs8Pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    privateKeyPkcs1Pem: privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
    privateKeyBase64: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}
