// The browser's side of passkeys (docs/DESIGN.md 18): the service's options handed to the browser's own
// WebAuthn (through @simplewebauthn/browser, loaded on the first passkey ceremony, not with the page), its
// answer handed back. A refusal or a cancelled prompt is an Error with words for the form.
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';

/** Whether this browser has WebAuthn at all (the passkey buttons are hidden otherwise). */
export const passkeysSupported = (): boolean =>
  typeof (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential === 'function';

const library = () => import('@simplewebauthn/browser');

function wording(error: unknown): Error {
  const name = (error as { name?: string })?.name;
  if (name === 'NotAllowedError' || name === 'AbortError')
    return new Error('The passkey prompt was cancelled or timed out');
  if (name === 'InvalidStateError') return new Error('This device already holds a passkey for the account');
  return error instanceof Error ? error : new Error(String(error));
}

/** Runs a ceremony of the browser's WebAuthn, a refusal in words for the form. */
async function ceremony<T>(run: (browser: Awaited<ReturnType<typeof library>>) => Promise<T>): Promise<T> {
  try {
    return await run(await library());
  } catch (error) {
    throw wording(error);
  }
}

/** Creates a credential for the options /auth/passkeys/register/options answered. */
export const createPasskey = (options: { challenge: string }) =>
  ceremony(({ startRegistration }) =>
    startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON }),
  );

/** Signs the challenge of request options (a login, or a login challenge's answer). */
export const signWithPasskey = (options: { challenge: string }) =>
  ceremony(({ startAuthentication }) =>
    startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON }),
  );
