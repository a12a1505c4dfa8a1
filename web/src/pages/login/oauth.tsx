// Sign in with another provider (docs/ACCOUNTS.md "Sign in with another provider"): one button per provider
// on the login form; `#/oauth?ticket=…` where the provider's callback sends the browser back, exchanged once
// for a session (or the second step), or, for a new identity, the username form; `?error=` shows the refusal,
// `?linked=` a link made from the security page.
import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../../api/client.ts';
import { Field, Submit, useForm } from '../../form.tsx';
import { FormError, Page, Status, useLoad } from '../../ui.tsx';
import { type Challenge, ChallengeStep, goHome, type SignedIn, startSession } from './challenge.tsx';

/**
 * The login form's buttons: each starts the provider's sign-in (a page of its own, then back here); at the
 * administrators' door only those whose `admin_door` is on.
 */
export function ProviderButtons({ door = 'user' }: { door?: 'user' | 'admin' }) {
  const providers = useLoad(() => call(api.GET('/auth/providers', { params: { query: { door } } })));
  if (!providers.data?.length) return null;
  const query = door === 'admin' ? '?door=admin' : '';
  return (
    <nav
      class="actions"
      aria-label={door === 'admin' ? "Administrators' providers" : 'Sign in with another provider'}
    >
      {providers.data.map((provider) => (
        <a
          key={provider.id}
          class="button secondary"
          href={`/auth/oauth/${encodeURIComponent(provider.id)}/start${query}`}
        >
          {door === 'admin'
            ? `Administrators: sign in with ${provider.label}`
            : `Sign in with ${provider.label}`}
        </a>
      ))}
    </nav>
  );
}

interface Signup {
  provider: string;
  label: string;
  email: string;
  ticket: string;
}

/** The first sign-in of a new identity: the account's username (the same rules as registration). */
function SignupForm({ signup, onSignedIn }: { signup: Signup; onSignedIn: (data: SignedIn) => void }) {
  const form = useForm({ username: '' });
  const create = form.submit(async ({ username }) => {
    onSignedIn(
      (await call(api.POST('/auth/oauth/signup', { body: { ticket: signup.ticket, username } }))) as SignedIn,
    );
  });
  return (
    <form onSubmit={create} noValidate>
      <Status
        message={`Welcome! Your ${signup.label} account (${signup.email}) has no account here yet: choose a username.`}
      />
      <Field
        form={form}
        name="username"
        label="Username"
        autoComplete="username"
        hint="3 to 32 letters, digits, dots, dashes or underscores."
        required
        autoFocus
      />
      {form.formError && <FormError message={form.formError} />}
      <Submit form={form}>Create account</Submit>
    </form>
  );
}

export function OAuthPage({ ticket, error, linked }: { ticket?: string; error?: string; linked?: string }) {
  const [failure, setFailure] = useState(error ?? '');
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [signup, setSignup] = useState<Signup | null>(null);
  const providers = useLoad(() => call(api.GET('/auth/providers', { params: { query: {} } })));
  const linkedLabel = providers.data?.find((provider) => provider.id === linked)?.label;
  const signedIn = (data: SignedIn) => {
    startSession(data);
    goHome();
  };
  useEffect(() => {
    if (!ticket) return;
    // The ticket is single-use: taken out of the address before it is exchanged.
    history.replaceState(null, '', '#/oauth');
    call(api.POST('/auth/oauth/ticket', { body: { ticket } }))
      .then((data) => {
        if ('signup' in data) setSignup(data.signup);
        else if ('totp_required' in data) setChallenge(data);
        else signedIn(data);
      })
      .catch((caught: Error) => setFailure(caught.message));
  }, [ticket]);
  return (
    <Page title="Sign in with another provider">
      <div class="narrow">
        {failure && <FormError message={failure} />}
        {linked && <Status message={`Linked: you may now sign in with ${linkedLabel ?? linked}.`} />}
        {challenge && <ChallengeStep challenge={challenge} onSignedIn={signedIn} />}
        {signup && <SignupForm signup={signup} onSignedIn={signedIn} />}
        {!challenge && !signup && !failure && ticket && <Status message="Signing you in…" />}
        <p>{linked ? <a href="#/security">Back to Security</a> : <a href="#/login">Log in</a>}</p>
      </div>
    </Page>
  );
}
