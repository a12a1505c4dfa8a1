// A software authenticator for passkey tests: ES256 keys from node:crypto, `none` attestation, the
// attestation object and authenticator data CBOR-encoded by the small encoder below (unsigned and negative
// integers, byte and text strings, arrays, maps), flags UP/UV/AT and a signature counter. It answers the
// options the service gives the way a browser's navigator.credentials would, as JSON.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) {
    const out = Buffer.alloc(3);
    out[0] = (major << 5) | 25;
    out.writeUInt16BE(length, 1);
    return out;
  }
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}

/** CBOR (RFC 8949) of the few kinds WebAuthn's structures use. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries = [...value.entries()];
  return Buffer.concat([
    head(5, entries.length),
    ...entries.flatMap(([key, item]) => [cbor(key), cbor(item)]),
  ]);
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

interface HeldCredential {
  id: Buffer;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** What a test may bend in one ceremony. */
export interface Bend {
  origin?: string;
  rpId?: string;
  /** The counter to sign (default: one more than the last). */
  counter?: number;
  /** Which held credential answers (default: the first the options allow, or any for this RP ID). */
  credentialId?: string;
  /** Leave user verification out of the flags. */
  noUserVerification?: boolean;
}

interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
}

export class SoftAuthenticator {
  readonly credentials: HeldCredential[] = [];

  constructor(readonly origin = 'http://localhost:3000') {}

  /** Answers creation options: a new ES256 credential, attested with `none`. */
  register(options: CreationOptions, bend: Bend = {}) {
    const rpId = bend.rpId ?? options.rp.id ?? 'localhost';
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(32);
    const counter = bend.counter ?? 0;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      this.authDataHead(rpId, FLAG_UP | FLAG_AT | (bend.noUserVerification ? 0 : FLAG_UV), counter),
      Buffer.alloc(16), // aaguid: none
      idLength,
      id,
      coseKey,
    ]);
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientDataJSON = JSON.stringify({
      type: 'webauthn.create',
      challenge: options.challenge,
      origin: bend.origin ?? this.origin,
      crossOrigin: false,
    });
    this.credentials.push({ id, privateKey, rpId, userHandle: options.user.id, counter });
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform' as const,
    };
  }

  /** Answers request options with a signed assertion. */
  authenticate(options: RequestOptions, bend: Bend = {}) {
    const rpId = bend.rpId ?? options.rpId ?? 'localhost';
    const allowed = options.allowCredentials?.map((entry) => entry.id) ?? [];
    const credential = bend.credentialId
      ? this.credentials.find((held) => b64url(held.id) === bend.credentialId)
      : this.credentials.find((held) =>
          allowed.length > 0 ? allowed.includes(b64url(held.id)) : held.rpId === (options.rpId ?? rpId),
        );
    if (!credential) throw new Error('no credential for these options');
    const counter = bend.counter ?? credential.counter + 1;
    credential.counter = counter;
    const authData = this.authDataHead(rpId, FLAG_UP | (bend.noUserVerification ? 0 : FLAG_UV), counter);
    const clientDataJSON = JSON.stringify({
      type: 'webauthn.get',
      challenge: options.challenge,
      origin: bend.origin ?? this.origin,
      crossOrigin: false,
    });
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientDataJSON)]),
      credential.privateKey,
    );
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: 'platform' as const,
    };
  }

  private authDataHead(rpId: string, flags: number, counter: number): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count]);
  }
}
