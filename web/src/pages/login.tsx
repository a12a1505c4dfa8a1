// Log in (one form for users and administrators, an "Administrator account" box naming the door to try first), the TOTP challenge (a 6-digit code or a recovery code), register with the
// e-mail code, and reset a forgotten password by the mailed code or link (docs/SPEC.md 3.2, 4.1). Every
// login sends the device token this browser kept for the account and keeps the one it answers.
import { useState } from 'preact/hooks';
import { ApiError, api, call } from '../api/client.ts';
import { devices, type SessionUser } from '../api/session.ts';
import { CodeField, Field, NewPasswordField, PasswordField, useForm } from '../form.tsx';
import { passkeysSupported, signWithPasskey } from '../passkey.ts';
import { useProofOfWork } from '../proof-of-work.tsx';
import { navigate } from '../router.ts';
import { FormError, Page, Status } from '../ui.tsx';
import { type Challenge, ChallengeStep, goHome, type SignedIn, startSession } from './login/challenge.tsx';
import { ProviderButtons } from './login/oauth.tsx';

type Door = SessionUser['role'];

interface LoginFormProps {
  initialUsername?: string;
  /** The door of the account whose session ended (the login dialog over a page); else the account decides. */
  door?: Door;
  onDone: () => void;
  autoFocus?: boolean;
}

/** Where this browser keeps the form's "Administrator account" choice. */
const ADMIN_CHOICE_KEY = 'console.adminDoor';

/**
 * The doors to try, in order (docs/ACCOUNTS.md "Doors"): the one this browser saw the account log in at,
 * alone; for an account it has not seen, the door the form's "Administrator account" box names, then the
 * other. Both doors answer a wrong door exactly as a wrong password (one 401), so the second is tried only
 * after the first's 401, and nothing shown tells which kind of account a name is.
 */
function doorsFor(identifier: string, door: Door | undefined, admin: boolean): Door[] {
  const known = door ?? devices.roleOf(identifier);
  if (known) return [known];
  return admin ? ['admin', 'user'] : ['user', 'admin'];
}

/** Runs `attempt` at each door in turn while the door answers 401; the last answer (or refusal) stands. */
async function throughDoors<T>(doors: Door[], attempt: (door: Door) => Promise<T>): Promise<T> {
  for (const [index, door] of doors.entries()) {
    try {
      return await attempt(door);
    } catch (caught) {
      const last = index === doors.length - 1;
      if (last || !(caught instanceof ApiError) || caught.status !== 401) throw caught;
    }
  }
  throw new Error('no door to try');
}

export function LoginForm({ initialUsername = '', door, onDone, autoFocus }: LoginFormProps) {
  const form = useForm({ username: initialUsername, password: '' });
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  // An administrator ticks it once: this browser remembers it, and their logins go to their door first.
  const [admin, setAdmin] = useState(() => localStorage.getItem(ADMIN_CHOICE_KEY) === 'yes');
  const chooseAdmin = (on: boolean) => {
    setAdmin(on);
    if (on) localStorage.setItem(ADMIN_CHOICE_KEY, 'yes');
    else localStorage.removeItem(ADMIN_CHOICE_KEY);
  };

  const login = form.submit(async ({ username, password }) => {
    const device_token = devices.tokenFor(username);
    const body = { username, password, ...(device_token ? { device_token } : {}) };
    const data = await throughDoors(doorsFor(username, door, admin), (at) =>
      call(api.POST(at === 'admin' ? '/admin/auth/login' : '/auth/login', { body })),
    );
    if ('totp_required' in data) return setChallenge(data);
    signedIn(data);
  });

  const signedIn = (data: SignedIn) => {
    startSession(data);
    onDone();
  };

  // Passwordless (docs/DESIGN.md 18): the typed name's passkeys, or any this device holds for the site. A
  // challenge belongs to its door, so an account this browser has not seen may be asked twice.
  const withPasskey = form.submit(async ({ username }) => {
    const name = username.trim();
    signedIn(
      await throughDoors(doorsFor(name, door, admin), async (at) => {
        const prefix = at === 'admin' ? '/admin/auth/passkeys/login' : '/auth/passkeys/login';
        const options = await call(
          api.POST(`${prefix}/options` as '/auth/passkeys/login/options', {
            body: name ? { username: name } : {},
          }),
        );
        const response = await signWithPasskey(options);
        return call(api.POST(`${prefix}/verify` as '/auth/passkeys/login/verify', { body: { response } }));
      }),
    );
  });

  if (challenge) {
    return <ChallengeStep challenge={challenge} onSignedIn={signedIn} onBack={() => setChallenge(null)} />;
  }

  return (
    <form onSubmit={login} noValidate>
      <Field
        form={form}
        name="username"
        label="Username or e-mail"
        autoComplete="username"
        required
        autoFocus={autoFocus && !initialUsername}
      />
      <PasswordField form={form} label="Password" required autoFocus={autoFocus && !!initialUsername} />
      {!door && (
        <div class="check">
          <input
            id="admin-door"
            type="checkbox"
            checked={admin}
            onChange={(event) => chooseAdmin((event.target as HTMLInputElement).checked)}
          />
          <label for="admin-door">Administrator account</label>
        </div>
      )}
      {form.formError && <FormError message={form.formError} />}
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Log in
        </button>
        {passkeysSupported() && (
          <button type="button" class="secondary" onClick={withPasskey} disabled={form.busy}>
            Sign in with a passkey
          </button>
        )}
      </div>
    </form>
  );
}

export function LoginPage() {
  return (
    <Page title="Log in">
      <div class="narrow">
        <LoginForm onDone={goHome} />
        <ProviderButtons />
        <ProviderButtons door="admin" />
        <p>
          <a href="#/reset">Forgot your password?</a>
        </p>
        <p>
          No account yet? <a href="#/register">Register</a>. Or browse the{' '}
          <a href="#/gallery">public gallery</a>.
        </p>
      </div>
    </Page>
  );
}

export function RegisterPage() {
  const form = useForm({ email: '', code: '', username: '', password: '' });
  const [codeSent, setCodeSent] = useState('');
  const proof = useProofOfWork();

  const sendCode = form.submit(async ({ email }) => {
    const data = await call(api.POST('/auth/register/code', { body: { email, ...(await proof.altcha()) } }));
    setCodeSent(
      `A code was sent to ${email}; it is valid until ${new Date(data.expires_at).toLocaleTimeString()}.`,
    );
  });

  const register = form.submit(async ({ email, code, username, password }) => {
    const body = { email, code: code.trim(), username, password, ...(await proof.altcha()) };
    await call(api.POST('/auth/register', { body }));
    const data = await call(api.POST('/auth/login', { body: { username, password } }));
    if ('totp_required' in data) return navigate('/login');
    startSession(data);
    navigate('/files');
  });

  return (
    <Page title="Register">
      <div class="narrow">
        <form onSubmit={codeSent ? register : sendCode} noValidate>
          <Field form={form} name="email" label="E-mail" type="email" autoComplete="email" required />
          {codeSent && (
            <>
              <Status message={codeSent} />
              <CodeField form={form} label="E-mail code" required />
              <Field
                form={form}
                name="username"
                label="Username"
                autoComplete="username"
                hint="3 to 32 letters, digits, dots, dashes or underscores."
                required
              />
              <NewPasswordField form={form} name="password" label="Password" required />
            </>
          )}
          {proof.widget}
          {form.formError && <FormError message={form.formError} />}
          <div class="actions">
            <button type="submit" disabled={form.busy}>
              {codeSent ? 'Create account' : 'Send code'}
            </button>
            {codeSent && (
              <button type="button" class="secondary" onClick={sendCode} disabled={form.busy}>
                Send the code again
              </button>
            )}
          </div>
        </form>
        <p>
          Already registered? <a href="#/login">Log in</a>.
        </p>
      </div>
    </Page>
  );
}

/**
 * A forgotten password: `#/reset` mails a code and a link; the code is typed here, or the link opens
 * `#/reset?token=…`, which asks only for the new password. Every session, API token and passkey ends, and
 * the reset signs this browser in (through the second step when TOTP is on), keeping a new device token.
 */
export function ResetPage({ token }: { token?: string | undefined }) {
  const form = useForm({ email: '', code: '', new_password: '' });
  const [codeSent, setCodeSent] = useState('');
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const proof = useProofOfWork();

  const sendCode = form.submit(async ({ email }) => {
    const body = { email, ...(await proof.altcha()) };
    const data = await call(api.POST('/auth/password/reset/code', { body }));
    setCodeSent(
      `If ${email} belongs to an account, a code and a link were sent to it; they are valid until ${new Date(data.expires_at).toLocaleTimeString()}.`,
    );
  });

  const signedIn = (data: SignedIn) => {
    startSession(data);
    goHome();
  };

  const reset = form.submit(async ({ email, code, new_password }) => {
    const body = token ? { token, new_password } : { email, code: code.trim(), new_password };
    const data = await call(api.POST('/auth/password/reset', { body }));
    if ('totp_required' in data) return setChallenge(data);
    signedIn(data);
  });

  return (
    <Page title="Reset your password">
      <div class="narrow">
        {challenge ? (
          <>
            <Status message="Your password was changed: every session, API token and passkey has ended." />
            <ChallengeStep challenge={challenge} onSignedIn={signedIn} />
          </>
        ) : (
          <form onSubmit={token || codeSent ? reset : sendCode} noValidate>
            {!token && (
              <Field form={form} name="email" label="E-mail" type="email" autoComplete="email" required />
            )}
            {!token && codeSent && (
              <>
                <Status message={codeSent} />
                <CodeField form={form} label="E-mail code" required />
              </>
            )}
            {(token || codeSent) && <NewPasswordField form={form} required />}
            {!token && !codeSent && proof.widget}
            {form.formError && <FormError message={form.formError} />}
            <div class="actions">
              <button type="submit" disabled={form.busy}>
                {token || codeSent ? 'Set the new password' : 'Send code'}
              </button>
            </div>
          </form>
        )}
        <p>
          <a href="#/login">Log in</a>
        </p>
      </div>
    </Page>
  );
}
