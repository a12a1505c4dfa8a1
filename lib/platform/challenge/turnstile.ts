// Cloudflare Turnstile's server-side check (siteverify): the token a widget gave, posted with the secret
// to `verify_url` (docs/DEPLOYMENT.md "Proof of work with Turnstile"). Answers whether Cloudflare accepted it.

export interface TurnstileSettings {
  secretKey: string;
  verifyUrl: string;
}

/** true when the verifier accepts the token; throws when it cannot be asked (network, 5xx, not JSON). */
export async function verifyTurnstile(
  settings: TurnstileSettings,
  token: string,
  ip: string,
): Promise<boolean> {
  const form = new URLSearchParams({ secret: settings.secretKey, response: token });
  if (ip) form.set('remoteip', ip);
  const response = await fetch(settings.verifyUrl, {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`Turnstile verifier answered ${response.status}`);
  const answer = (await response.json()) as { success?: unknown };
  return answer.success === true;
}
