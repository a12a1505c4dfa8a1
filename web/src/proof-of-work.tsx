// Proof of work on the console's forms anyone may send (registration, reset codes, reports): where the
// deployment requires it (GET /api/v1/challenge says so), ALTCHA's widget in the form solves a fresh
// challenge for each request, whose payload goes as the body's `altcha` (docs/ACCOUNTS.md "Proof of work").
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, call } from './api/client.ts';

/** The widget to place in the form (nothing where not required) and the `altcha` field of the next request. */
export function useProofOfWork() {
  const host = useRef<HTMLDivElement>(null);
  const [required, setRequired] = useState(false);
  useEffect(() => {
    call(api.GET('/api/v1/challenge')).then(
      (challenge) => setRequired(challenge.required),
      () => undefined,
    );
  }, []);
  // The widget's code (and its worker) load only where a form needs it.
  const mounted = async () => {
    const { altchaWidget, solve } = await import('./altcha.ts');
    const place = host.current;
    if (!place) throw new Error('The check in the browser is not ready yet; try again.');
    return { widget: place.querySelector('altcha-widget') ?? place.appendChild(altchaWidget()), solve };
  };
  useEffect(() => {
    if (required) mounted().catch(() => undefined);
  }, [required]);

  async function altcha(): Promise<{ altcha?: string }> {
    const challenge = await call(api.GET('/api/v1/challenge'));
    if (!challenge.required) return {};
    if (challenge.provider !== 'altcha') throw new Error('This deployment checks requests with Turnstile.');
    const { widget, solve } = await mounted();
    return { altcha: await solve(widget, challenge) };
  }
  return { widget: required ? <div class="proof-of-work" ref={host} /> : null, altcha };
}
