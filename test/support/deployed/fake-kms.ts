// An in-process stand-in for the KMS JSON 1.1 API: data keys, Encrypt/Decrypt bound to an encryption context.
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';

export interface KmsAnswer {
  status: number;
  body: unknown;
}

export interface FakeKms {
  readonly keyArns: readonly string[];
  /** Calls per operation, failed ones included. */
  readonly counts: Record<string, number>;
  handle(operation: string, body: unknown): KmsAnswer;
}

// Blob layout: version | key ARN length (uint16 BE) | key ARN | 12-byte IV | AES-256-GCM ciphertext | 16-byte tag.
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ARN = /^arn:aws[\w-]*:kms:[\w-]+:\d{12}:key\/[\w-]+$/;

/** The key ARN a blob of the fake KMS names, or undefined when it is not one of its blobs. */
export function keyArnOfCiphertext(blobBase64: string): string | undefined {
  const blob = Buffer.from(blobBase64, 'base64');
  if (blob.length < 3 || blob[0] !== VERSION) return undefined;
  const length = blob.readUInt16BE(1);
  if (blob.length < 3 + length + IV_BYTES + TAG_BYTES) return undefined;
  const arn = blob.subarray(3, 3 + length).toString('utf8');
  return KEY_ARN.test(arn) ? arn : undefined;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Context = Record<string, string>;

function contextOf(value: unknown): Context {
  if (value === undefined || value === null) return {};
  const valid =
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string');
  if (!valid) throw new KmsError('ValidationException', 'EncryptionContext must map strings to strings');
  return value as Context;
}

/** AAD of a blob: the context in key order, so `{a,b}` and `{b,a}` are the same context, as in KMS. */
function canonical(context: Context): Buffer {
  const entries = Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(entries), 'utf8');
}

function blobArg(body: Record<string, unknown>, name: string): Buffer {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0) {
    throw new KmsError('ValidationException', `${name} is required`);
  }
  return Buffer.from(value, 'base64');
}

export function createFakeKms(options: { keyArns: string[] }): FakeKms {
  for (const arn of options.keyArns) {
    if (!KEY_ARN.test(arn)) throw new Error(`Fake KMS: ${arn} is not a KMS key ARN`);
  }
  // Each key its own secret: a blob sealed under one key never opens under another.
  const secrets = new Map(options.keyArns.map((arn) => [arn, randomBytes(32)]));
  const created = Math.floor(Date.now() / 1000);
  const counts: Record<string, number> = {};

  function keyOf(keyId: unknown): string {
    if (typeof keyId !== 'string' || keyId.length === 0)
      throw new KmsError('ValidationException', 'KeyId is required');
    // A full ARN as is; a bare key id by the key segment. Aliases are not modelled, so they are not found.
    const arn = keyId.startsWith('arn:')
      ? keyId
      : options.keyArns.find((candidate) => candidate.endsWith(`:key/${keyId}`));
    if (!arn || !secrets.has(arn)) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    return arn;
  }

  function seal(arn: string, plaintext: Buffer, context: Context): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', secrets.get(arn)!, iv);
    cipher.setAAD(canonical(context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const arnBytes = Buffer.from(arn, 'utf8');
    const header = Buffer.alloc(3);
    header[0] = VERSION;
    header.writeUInt16BE(arnBytes.length, 1);
    return Buffer.concat([header, arnBytes, iv, body, cipher.getAuthTag()]).toString('base64');
  }

  function open(blob: Buffer, context: Context): { arn: string; plaintext: Buffer } {
    const arn = keyArnOfCiphertext(blob.toString('base64'));
    if (!arn) throw new KmsError('InvalidCiphertextException', 'The ciphertext is not a KMS ciphertext');
    const secret = secrets.get(arn);
    if (!secret) throw new KmsError('NotFoundException', `Key '${arn}' does not exist`);
    const start = 3 + Buffer.byteLength(arn);
    const iv = blob.subarray(start, start + IV_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', secret, iv);
    decipher.setAAD(canonical(context));
    decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
    try {
      const sealed = blob.subarray(start + IV_BYTES, blob.length - TAG_BYTES);
      return { arn, plaintext: Buffer.concat([decipher.update(sealed), decipher.final()]) };
    } catch {
      // Wrong context and tampering look the same to GCM, and KMS does not tell them apart either.
      throw new KmsError('InvalidCiphertextException', 'The ciphertext or its encryption context is invalid');
    }
  }

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    GenerateDataKey(body) {
      const arn = keyOf(body.KeyId);
      const spec = body.KeySpec;
      const count = body.NumberOfBytes;
      if ((spec === undefined) === (count === undefined)) {
        throw new KmsError('ValidationException', 'Give exactly one of KeySpec and NumberOfBytes');
      }
      const bytes =
        spec === 'AES_256' ? 32 : spec === 'AES_128' ? 16 : typeof count === 'number' ? count : Number.NaN;
      if (!Number.isInteger(bytes) || bytes < 1 || bytes > 1024) {
        throw new KmsError('ValidationException', `Invalid KeySpec/NumberOfBytes ${String(spec ?? count)}`);
      }
      const plaintext = randomBytes(bytes);
      const blob = seal(arn, plaintext, contextOf(body.EncryptionContext));
      return { KeyId: arn, CiphertextBlob: blob, Plaintext: plaintext.toString('base64') };
    },
    Encrypt(body) {
      const arn = keyOf(body.KeyId);
      const plaintext = blobArg(body, 'Plaintext');
      if (plaintext.length > 4096) throw new KmsError('ValidationException', 'Plaintext exceeds 4096 bytes');
      const blob = seal(arn, plaintext, contextOf(body.EncryptionContext));
      return { KeyId: arn, CiphertextBlob: blob, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    },
    Decrypt(body) {
      const blob = blobArg(body, 'CiphertextBlob');
      const named = body.KeyId === undefined ? undefined : keyOf(body.KeyId);
      const blobKey = keyArnOfCiphertext(blob.toString('base64'));
      if (named && blobKey && named !== blobKey) {
        throw new KmsError(
          'IncorrectKeyException',
          'The key ID in the request does not identify the key of the ciphertext',
        );
      }
      const { arn, plaintext } = open(blob, contextOf(body.EncryptionContext));
      return {
        KeyId: arn,
        Plaintext: plaintext.toString('base64'),
        EncryptionAlgorithm: 'SYMMETRIC_DEFAULT',
      };
    },
    DescribeKey(body) {
      const arn = keyOf(body.KeyId);
      const [, , , , account] = arn.split(':');
      return {
        KeyMetadata: {
          KeyId: arn.slice(arn.indexOf(':key/') + 5),
          Arn: arn,
          AWSAccountId: account,
          CreationDate: created,
          Enabled: true,
          KeyState: 'Enabled',
          KeyUsage: 'ENCRYPT_DECRYPT',
          KeySpec: 'SYMMETRIC_DEFAULT',
          CustomerMasterKeySpec: 'SYMMETRIC_DEFAULT',
          EncryptionAlgorithms: ['SYMMETRIC_DEFAULT'],
          KeyManager: 'CUSTOMER',
          Origin: 'AWS_KMS',
          MultiRegion: false,
          Description: '',
        },
      };
    },
  };

  return {
    keyArns: [...options.keyArns],
    counts,
    handle(operation, body) {
      counts[operation] = (counts[operation] ?? 0) + 1;
      const run = operations[operation];
      if (!run) {
        return {
          status: 400,
          body: { __type: 'UnknownOperationException', message: `Fake KMS has no ${operation}` },
        };
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return {
          status: 400,
          body: { __type: 'SerializationException', message: 'Body must be a JSON object' },
        };
      }
      try {
        return { status: 200, body: run(body as Record<string, unknown>) };
      } catch (error) {
        if (!(error instanceof KmsError)) throw error;
        return { status: 400, body: { __type: error.type, message: error.message } };
      }
    },
  };
}

/** A fresh key ARN in the shape KMS gives them. */
export function newKeyArn(region: string, account: string): string {
  return `arn:aws:kms:${region}:${account}:key/${randomUUID()}`;
}
