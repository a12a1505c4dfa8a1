// The embedded master key: 32 random bytes created once in the data folder (no AWS account needed).
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DecryptionError, type MasterKey, openWith, parseCiphertext, sealWith } from './master-key.ts';

export const LOCAL_KEY_FILE = 'master.key';

/** Reads the key file in `dataDir`, creating it first if absent (exclusively, so two starts agree). */
export function loadOrCreateLocalKeyBytes(dataDir: string): Buffer {
  const file = join(dataDir, LOCAL_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readFileSync(file);
  if (key.length !== 32) throw new Error(`${file} must hold exactly 32 bytes`);
  return key;
}

export function createLocalMasterKey(keyBytes: Buffer): MasterKey {
  if (keyBytes.length !== 32) throw new Error('the local master key must be 32 bytes');
  const key = Buffer.from(keyBytes);
  // A fingerprint, not the key: tells which key a ciphertext needs when keys are rotated.
  const keyRef = createHash('sha256').update(key).digest().subarray(0, 8).toString('base64url');
  return {
    async encrypt(plaintext, context) {
      return sealWith(key, { provider: 'local', keyRef }, plaintext, context);
    },
    async decrypt(ciphertext, context) {
      const parsed = parseCiphertext(ciphertext);
      if (parsed.provider !== 'local' || parsed.keyRef !== keyRef) {
        throw new DecryptionError('ciphertext was sealed with another key');
      }
      return openWith(key, parsed, context);
    },
  };
}
