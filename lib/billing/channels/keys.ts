// Turns RSA keys as operators paste them (PEM PKCS#1/PKCS#8/SPKI/X.509, or bare base64) into KeyObjects.

import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ChannelConfigError } from './errors.ts';

// Settings stored in env files or JSON often carry "\n" as two characters instead of a line break.
function unescapeLineBreaks(text: string): string {
  return text.replaceAll('\\r', '').replaceAll('\\n', '\n').trim();
}

function base64Body(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) return undefined;
  return Buffer.from(compact, 'base64');
}

function requireText(field: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ChannelConfigError(field, 'is required');
  return unescapeLineBreaks(value);
}

/** Loads a private RSA key; a ChannelConfigError names `field` (never the value) when it does not parse. */
export function loadPrivateKey(field: string, value: string | undefined): KeyObject {
  const text = requireText(field, value);
  const attempts: Array<() => KeyObject> = [];
  if (text.includes('-----BEGIN')) {
    attempts.push(() => createPrivateKey(text));
  } else {
    const der = base64Body(text);
    if (der) {
      attempts.push(() => createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
      attempts.push(() => createPrivateKey({ key: der, format: 'der', type: 'pkcs1' }));
    }
  }
  return firstRsaKey(attempts, field, 'is not an RSA private key in PEM or base64 form');
}

/** Loads a public RSA key, also from an X.509 certificate; throws ChannelConfigError naming `field`. */
export function loadPublicKey(field: string, value: string | undefined): KeyObject {
  const text = requireText(field, value);
  const attempts: Array<() => KeyObject> = [];
  if (text.includes('-----BEGIN CERTIFICATE')) {
    attempts.push(() => new X509Certificate(text).publicKey);
  } else if (text.includes('-----BEGIN')) {
    attempts.push(() => createPublicKey(text));
  } else {
    const der = base64Body(text);
    if (der) {
      attempts.push(() => createPublicKey({ key: der, format: 'der', type: 'spki' }));
      attempts.push(() => createPublicKey({ key: der, format: 'der', type: 'pkcs1' }));
      attempts.push(() => new X509Certificate(der).publicKey);
    }
  }
  return firstRsaKey(attempts, field, 'is not an RSA public key or certificate in PEM or base64 form');
}

/** The serial of a PEM certificate in upper-case hex, or undefined when the text is a bare key. */
export function certificateSerial(value: string): string | undefined {
  const text = unescapeLineBreaks(value);
  if (!text.includes('-----BEGIN CERTIFICATE')) return undefined;
  return new X509Certificate(text).serialNumber.toUpperCase();
}

function firstRsaKey(attempts: Array<() => KeyObject>, field: string, problem: string): KeyObject {
  for (const attempt of attempts) {
    let key: KeyObject;
    try {
      key = attempt();
    } catch {
      continue; // Try the next encoding; a single, value-free error follows if none fits.
    }
    if (key.asymmetricKeyType === 'rsa') return key;
    break;
  }
  throw new ChannelConfigError(field, problem);
}

export function privateKeyPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

export function publicKeyPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'spki' }).toString();
}
