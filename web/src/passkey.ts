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

/** Creates a credential for the options /auth/passkeys/register/options answered. */
export async function createPasskey(options: { challenge: string }) {
  const { startRegistration } = await library();
  try {
    return await startRegistration({
      optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON,
    });
  } catch (error) {
    throw wording(error);
  }
}

/** Signs the challenge of request options (a login, or a login challenge's answer). */
export async function signWithPasskey(options: { challenge: string }) {
  const { startAuthentication } = await library();
  try {
    return await startAuthentication({
      optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON,
    });
  } catch (error) {
    throw wording(error);
  }
}
