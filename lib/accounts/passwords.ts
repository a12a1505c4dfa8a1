// Password hashing: argon2id in PHC strings with the OWASP parameters, re-hashed when they change.
// Not `createRequire`: bundles declare that name in their banner (infra/bundling.ts ESM_REQUIRE_BANNER).
import { createRequire as requireFrom } from 'node:module';

type Argon2 = typeof import('@node-rs/argon2');
let argon2: Argon2 | undefined;

/**
 * The native addon, loaded on the first hash rather than at cold start (most requests of the auth group
 * never hash). CommonJS, required synchronously: it ships beside the bundle (infra/bundling.ts).
 */
function loadArgon2(): Argon2 {
  argon2 ??= requireFrom(import.meta.url)('@node-rs/argon2') as Argon2;
  return argon2;
}

// argon2id; the package's Algorithm is a const enum, undefined at run time under esbuild (docs/CONTRIBUTING.md).
const ARGON2ID = 2;
export const PASSWORD_POLICY = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export async function hashPassword(password: string): Promise<string> {
  return loadArgon2().hash(password, { ...PASSWORD_POLICY, algorithm: ARGON2ID });
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
    await loadArgon2()
      .verify(await dummyHash, password)
      .catch(() => false);
    return false;
  }
  const { verify } = loadArgon2();
  try {
    return await verify(storedHash, password);
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
