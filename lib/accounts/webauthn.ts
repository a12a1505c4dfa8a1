// The relying party and the WebAuthn library (docs/DESIGN.md 18). @simplewebauthn/server (with its ASN.1
// and CBOR modules) is loaded on the first passkey request, not at every cold start of the accounts group: it
// is installed beside the bundle, not inside it (infra/bundling.ts PASSKEY_PACKAGE).

/** Who the passkeys are for: `auth.passkeys.rp_id` and the origins a ceremony may run at. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
export function loadWebauthn(): Promise<typeof import('@simplewebauthn/server')> {
  library ??= import('@simplewebauthn/server').catch((error: unknown) => {
    library = undefined;
    throw error;
  });
  return library;
}

/**
 * The challenge a response signed (base64url), read from its clientDataJSON before anything is verified,
 * to find the challenge item; undefined when it cannot be read. The library checks it again.
 */
export function signedChallengeOf(response: { response: { clientDataJSON: string } }): string | undefined {
  try {
    const clientData = JSON.parse(
      Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'),
    );
    const challenge = clientData?.challenge;
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(challenge) ? challenge : undefined;
  } catch {
    return undefined;
  }
}
