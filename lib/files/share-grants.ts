// The image links a share hands its viewers (docs/ALBUMS.md "What a share adds"): `/s/<id>/i/<grant>`, never
// the file's own `/i/<key>`. A grant seals a file id and an expiry (AES-256-GCM, bound to the share's id) under
// a key kept in the table, sealed by the master key: it names no key, id or owner, cannot be forged, moved
// to another share or extended, and ends. Its nonce is derived from what it seals (a synthetic IV), so every
// viewer within one window gets the same links and the CDN can serve them from its short cache.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import type { Clock } from '#lib/platform/db/table.ts';

/** The longest a share's image answer may be kept (browsers and the CDN): a revocation shows within this. */
export const SHARE_IMAGE_MAX_AGE_SECONDS = 60;
/** Grants end on a boundary of these windows, one to two windows after they are issued. */
export const GRANT_WINDOW_SECONDS = 600;
/** 12 bytes of nonce, 20 sealed (expiry in epoch seconds, the file's uuid), a 16-byte tag: 64 characters. */
const GRANT = /^[A-Za-z0-9_-]{64}$/;

export interface Grant {
  fileId: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface ShareGrantsDeps {
  /** 32 random bytes, the same in every container (lib/accounts/sealed-key.ts). */
  key: () => Promise<Buffer>;
  clock: Clock;
}

const derive = (key: Buffer, use: string) =>
  Buffer.from(hkdfSync('sha256', key, '', `share-grant ${use}`, 32));

export class ShareGrants {
  constructor(private readonly deps: ShareGrantsDeps) {}

  /** A grant of one of the share's files (ids are uuids), valid until the end of the window after this one. */
  async issue(shareId: string, fileId: string): Promise<string> {
    const { seal, nonce } = await this.keysOf();
    const expires =
      (Math.floor(this.deps.clock().getTime() / 1000 / GRANT_WINDOW_SECONDS) + 2) * GRANT_WINDOW_SECONDS;
    const plain = Buffer.alloc(20);
    plain.writeUInt32BE(expires, 0);
    Buffer.from(fileId.replaceAll('-', ''), 'hex').copy(plain, 4);
    const iv = createHmac('sha256', nonce).update(shareId).update(plain).digest().subarray(0, 12);
    const cipher = createCipheriv('aes-256-gcm', seal, iv).setAAD(Buffer.from(shareId));
    return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString(
      'base64url',
    );
  }

  /** What a grant of this share says, expired or not; undefined for anything this share did not issue. */
  async read(shareId: string, grant: string): Promise<Grant | undefined> {
    if (!GRANT.test(grant)) return undefined;
    const bytes = Buffer.from(grant, 'base64url');
    const { seal } = await this.keysOf();
    const decipher = createDecipheriv('aes-256-gcm', seal, bytes.subarray(0, 12)).setAAD(
      Buffer.from(shareId),
    );
    decipher.setAuthTag(bytes.subarray(32));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(bytes.subarray(12, 32)), decipher.final()]);
    } catch {
      return undefined;
    }
    const hex = plain.subarray(4).toString('hex');
    const fileId = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)];
    return { fileId: fileId.join('-'), expiresAt: plain.readUInt32BE(0) * 1000 };
  }

  /** One key for sealing, another for the nonces, both derived from the stored one. */
  private async keysOf(): Promise<{ seal: Buffer; nonce: Buffer }> {
    const key = await this.deps.key();
    return { seal: derive(key, 'seal'), nonce: derive(key, 'nonce') };
  }
}
