// The master key interface and the versioned AES-256-GCM envelope both implementations share.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** What a ciphertext is bound to (e.g. `{purpose: 'totp', account: id}`); decrypting needs the same. */
export type EncryptionContext = Record<string, string>;

export interface MasterKey {
  encrypt(plaintext: Buffer | string, context: EncryptionContext): Promise<string>;
  decrypt(ciphertext: string, context: EncryptionContext): Promise<Buffer>;
}

/** Thrown when a ciphertext is malformed, tampered with, or presented with another context or key. */
export class DecryptionError extends Error {
  constructor(message = 'ciphertext cannot be decrypted') {
    super(message);
    this.name = 'DecryptionError';
  }
}

// Layout: v1.<provider>.<key reference>.<iv>.<ciphertext+tag>, each part base64url. The version and key
// reference let keys rotate: old ciphertexts name the key (or encrypted data key) they need.
const VERSION = 'v1';

function canonicalContext(context: EncryptionContext): string {
  return Object.keys(context)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(context[name]!)}`)
    .join('&');
}

export function sealWith(
  key: Buffer,
  header: { provider: string; keyRef: string },
  plaintext: Buffer | string,
  context: EncryptionContext,
): string {
  const prefix = `${VERSION}.${header.provider}.${header.keyRef}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  // The header is authenticated too, so a ciphertext cannot be moved to another key reference.
  cipher.setAAD(Buffer.from(`${prefix}|${canonicalContext(context)}`, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${prefix}.${iv.toString('base64url')}.${body.toString('base64url')}`;
}

export interface ParsedCiphertext {
  provider: string;
  keyRef: string;
  iv: Buffer;
  body: Buffer;
  prefix: string;
}

export function parseCiphertext(ciphertext: string): ParsedCiphertext {
  const parts = ciphertext.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION) throw new DecryptionError('unknown ciphertext format');
  const [, provider, keyRef, iv, body] = parts as [string, string, string, string, string];
  const ivBytes = Buffer.from(iv, 'base64url');
  const bodyBytes = Buffer.from(body, 'base64url');
  if (ivBytes.length !== 12 || bodyBytes.length < 16) throw new DecryptionError('truncated ciphertext');
  return { provider, keyRef, iv: ivBytes, body: bodyBytes, prefix: `${VERSION}.${provider}.${keyRef}` };
}

export function openWith(key: Buffer, parsed: ParsedCiphertext, context: EncryptionContext): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv);
    decipher.setAAD(Buffer.from(`${parsed.prefix}|${canonicalContext(context)}`, 'utf8'));
    decipher.setAuthTag(parsed.body.subarray(parsed.body.length - 16));
    return Buffer.concat([
      decipher.update(parsed.body.subarray(0, parsed.body.length - 16)),
      decipher.final(),
    ]);
  } catch {
    throw new DecryptionError();
  }
}
