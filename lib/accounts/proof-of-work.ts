// Proof of work before the requests a script would repeat (docs/ACCOUNTS.md "Proof of work", docs/DESIGN.md
// 26): registration, reset-code sends, share passwords and reports carry a solved challenge as `altcha`.
// ALTCHA's classic challenges, signed with a key derived from the token-signing key (no secret of its own),
// expiring (`expires` in the salt) and single use (a marker item per challenge, written conditionally, kept
// until it expires); or, where the deployment chose it, a Cloudflare Turnstile token checked at its verifier.
import { createHash, hkdfSync } from 'node:crypto';
import { createChallenge, extractParams, verifySolution } from 'altcha-lib/v1';
import type { Payload } from 'altcha-lib/v1/types';
import { errors } from '#lib/core/errors.ts';
import { verifyTurnstile } from '#lib/platform/challenge/turnstile.ts';
import type { AppConfig } from '#lib/platform/config/schema.ts';
import { ConditionFailedError, epochSeconds, type Table } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';

export interface ProofOfWorkDeps {
  table: Table;
  /** The token-signing key (sealed by the master key): the challenges' HMAC key is derived from it. */
  signingKey: () => Promise<Buffer>;
  /** `auth.challenge`. */
  settings: AppConfig['auth']['challenge'];
}

/** GET /api/v1/challenge: ALTCHA's challenge, and which widget the deployment uses. */
export interface ChallengeView {
  algorithm: string;
  challenge: string;
  salt: string;
  signature: string;
  maxnumber: number;
  required: boolean;
  provider: 'altcha' | 'turnstile';
  site_key: string | null;
}

/** What a page's form shows to solve (lib/http/share-page.ts); null: nothing. */
export type PageChallenge = { provider: 'altcha' } | { provider: 'turnstile'; siteKey: string } | null;

const refused = (message: string) => errors.validation([{ field: 'altcha', message }]);

function payloadOf(solution: string): Payload | undefined {
  try {
    const payload = JSON.parse(Buffer.from(solution, 'base64').toString('utf8')) as Payload;
    const valid =
      ['algorithm', 'challenge', 'salt', 'signature'].every(
        (key) => typeof payload[key as keyof Payload] === 'string',
      ) && Number.isSafeInteger(payload.number);
    return valid ? payload : undefined;
  } catch {
    return undefined;
  }
}

export class ProofOfWork {
  private hmacKey: Promise<string> | undefined;

  constructor(private readonly deps: ProofOfWorkDeps) {}

  private key(): Promise<string> {
    this.hmacKey ??= this.deps
      .signingKey()
      .then((key) => Buffer.from(hkdfSync('sha256', key, '', 'altcha challenge', 32)).toString('hex'))
      .catch((error: unknown) => {
        this.hmacKey = undefined;
        throw error;
      });
    return this.hmacKey;
  }

  async challenge(): Promise<ChallengeView> {
    const { max_number: maxnumber, expires_seconds, required, provider, turnstile } = this.deps.settings;
    const expires = new Date(this.deps.table.clock().getTime() + expires_seconds * 1000);
    const made = await createChallenge({ hmacKey: await this.key(), maxnumber, expires });
    const { algorithm, challenge, salt, signature } = made;
    const site_key = turnstile.site_key ?? null;
    return { algorithm, challenge, salt, signature, maxnumber, required, provider, site_key };
  }

  /** What a page's form shows to solve (lib/http/share-page.ts): nothing unless required. */
  pageChallenge(): PageChallenge {
    const { required, provider, turnstile } = this.deps.settings;
    if (!required) return null;
    return provider === 'turnstile' ? { provider, siteKey: turnstile.site_key ?? '' } : { provider };
  }

  /**
   * Where `auth.challenge.required`: a 400 naming `altcha` unless `solution` solves one of our unexpired,
   * unused challenges (or is a token Turnstile accepts); the challenge is used up. Otherwise nothing.
   */
  async check(solution: string | undefined, ip: string): Promise<void> {
    const { required, provider, turnstile } = this.deps.settings;
    if (!required) return;
    if (!solution) throw refused('is required: solve the challenge of GET /api/v1/challenge');
    if (provider === 'turnstile') {
      const accepted = await verifyTurnstile(
        { secretKey: turnstile.secret_key ?? '', verifyUrl: turnstile.verify_url },
        solution,
        ip,
      ).catch((error: unknown) => {
        log.warn('turnstile verifier failed', { error_name: (error as Error)?.name });
        throw errors.badGateway('altcha: the challenge could not be checked; try again');
      });
      if (!accepted) throw refused('was not accepted; solve the challenge again');
      return;
    }
    const payload = payloadOf(solution);
    if (!payload || !(await verifySolution(payload, await this.key(), false)))
      throw refused('does not solve a challenge of this service');
    const expires = Number(extractParams(payload).expires);
    const now = epochSeconds(this.deps.table.clock());
    if (!(expires > now)) throw refused('has expired: solve a new challenge');
    const id = createHash('sha256').update(payload.challenge).digest('base64url');
    try {
      await this.deps.table.putNew({ pk: `altcha#${id}`, sk: 'altcha', expires_at: expires });
    } catch (error) {
      if (error instanceof ConditionFailedError) throw refused('was used already: solve a new challenge');
      throw error;
    }
  }
}
