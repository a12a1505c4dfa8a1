// The login's second step and what every way of signing in ends with: the session started, this browser's
// device token kept (docs/ACCOUNTS.md "Device tokens"), and the way home.
import { api, call } from '../../api/client.ts';
import { devices, type SessionUser, session } from '../../api/session.ts';
import { Field, useForm } from '../../form.tsx';
import { passkeysSupported, signWithPasskey } from '../../passkey.ts';
import { navigate } from '../../router.ts';
import { FormError, Status } from '../../ui.tsx';

/** A session a login (or a reset) answered: this browser keeps its device token, then starts it. */
export interface SignedIn {
  token: string;
  device_token: string;
  user: SessionUser;
}

export function startSession(data: SignedIn): void {
  devices.keep(data.device_token, data.user);
  session.start(data.token, data.user);
}

export const goHome = () => navigate(session.isAdmin() ? '/admin/accounts' : '/files');

export interface Challenge {
  challenge_token: string;
  methods: string[];
}

/** The second step of a login or of a reset's sign-in: a TOTP code, a recovery code, or a passkey. */
export function ChallengeStep({
  challenge: { challenge_token, methods },
  onSignedIn,
  onBack,
}: {
  challenge: Challenge;
  onSignedIn: (data: SignedIn) => void;
  onBack?: () => void;
}) {
  const form = useForm({ code: '' });

  const withPasskey = form.submit(async () => {
    const options = await call(api.POST('/auth/passkeys/challenge/options', { body: { challenge_token } }));
    const response = await signWithPasskey(options);
    onSignedIn(
      await call(api.POST('/auth/passkeys/challenge/verify', { body: { challenge_token, response } })),
    );
  });

  const verify = form.submit(async ({ code }) => {
    onSignedIn(await call(api.POST('/auth/totp/verify', { body: { challenge_token, code: code.trim() } })));
  });

  return (
    <form onSubmit={verify} noValidate>
      <Status message="Enter the code from your authenticator app, or one of your recovery codes." />
      <Field
        form={form}
        name="code"
        label="Authentication code or recovery code"
        autoComplete="one-time-code"
        required
        autoFocus
      />
      {form.formError && <FormError message={form.formError} />}
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Verify
        </button>
        {methods.includes('passkey') && passkeysSupported() && (
          <button type="button" class="secondary" onClick={withPasskey} disabled={form.busy}>
            Use a passkey
          </button>
        )}
        {onBack && (
          <button type="button" class="secondary" onClick={onBack}>
            Back
          </button>
        )}
      </div>
    </form>
  );
}
