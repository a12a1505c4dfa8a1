// Password hashing: argon2id in PHC strings with the OWASP parameters, re-hashed when they change.
// Not `createRequire`: bundles declare that name in their banner (infra/bundling.ts ESM_REQUIRE_BANNER).
import { tracingChannel } from 'node:diagnostics_channel';
import { createRequire as requireFrom } from 'node:module';

type Argon2 = typeof import('@node-rs/argon2');
let argon2: Argon2 | undefined;

/**
 * The native addon, loaded on the first hash rather than at cold start (most requests of the accounts group
 * never hash). CommonJS, required synchronously: it ships beside the bundle (infra/bundling.ts).
 */
function loadArgon2(): Argon2 {
  argon2 ??= requireFrom(import.meta.url)('@node-rs/argon2') as Argon2;
  return argon2;
}

// argon2id; the package's Algorithm is a const enum, undefined at run time under esbuild (docs/CONTRIBUTING.md).
const ARGON2ID = 2;
export const PASSWORD_POLICY = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * Every argon2 hash or verification, its start and its end, for whoever measures the service from outside:
 * the critical-path wait counter (test/support/aws-waits.ts) reads an AWS call sent while a hash runs as
 * off the critical path, because on AWS the hash (tens of milliseconds) outlasts the call. Published only
 * when someone subscribes, so production pays one property read per hash; no test hook in this module.
 */
export const PASSWORD_HASH_CHANNEL = 'service:password-hash';
const hashing = tracingChannel<object, object>(PASSWORD_HASH_CHANNEL);

function traced<T>(work: () => Promise<T>): Promise<T> {
  return hashing.hasSubscribers ? hashing.tracePromise(work, {}) : work();
}

export async function hashPassword(password: string): Promise<string> {
  return traced(() => loadArgon2().hash(password, { ...PASSWORD_POLICY, algorithm: ARGON2ID }));
}

/** A hash of a password nobody has: verifying against it costs what a real verification costs. */
let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. With no stored hash (unknown user) it still does one full verification, so the
 * response time does not tell who has an account.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword('no-such-account-password');
    const dummy = await dummyHash;
    await traced(() => loadArgon2().verify(dummy, password)).catch(() => false);
    return false;
  }
  const { verify } = loadArgon2();
  try {
    return await traced(() => verify(storedHash, password));
  } catch {
    return false;
  }
}

export function needsRehash(storedHash: string): boolean {
  const { parseOptions } = loadArgon2();
  try {
    const options = parseOptions(storedHash);
    return (
      options.algorithm !== ARGON2ID ||
      options.memoryCost !== PASSWORD_POLICY.memoryCost ||
      options.timeCost !== PASSWORD_POLICY.timeCost ||
      options.parallelism !== PASSWORD_POLICY.parallelism
    );
  } catch {
    return true;
  }
}
