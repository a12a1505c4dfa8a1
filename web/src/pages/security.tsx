// Security (docs/ACCOUNTS.md): TOTP (security/totp.tsx), passkeys (security/passkeys.tsx), e-mail binding,
// password change, sessions and security events (security/sessions.tsx), and the account's export and
// deletion (security/lifecycle.tsx).
import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { CodeField, Field, NewPasswordField, PasswordField, Submit, useForm } from '../form.tsx';
import { FormError, Page, Status, useLoad } from '../ui.tsx';
import { Identities } from './security/identities.tsx';
import { DeleteAccount, Export } from './security/lifecycle.tsx';
import { Passkeys } from './security/passkeys.tsx';
import { Events, Sessions } from './security/sessions.tsx';
import { Totp } from './security/totp.tsx';

function Email({
  email,
  verified,
  onChange,
}: {
  email: string | null;
  verified: boolean;
  onChange: () => void;
}) {
  const form = useForm({ email: '', code: '', password: '' });
  const unbindForm = useForm({ password: '' });
  const [sent, setSent] = useState('');
  const send = form.submit(async ({ email: target }) => {
    await call(api.POST('/auth/email/code', { body: { email: target } }));
    setSent(`A code was sent to ${target}.`);
  });
  const verify = form.submit(async ({ email: target, code, password }) => {
    await call(api.POST('/auth/email/verify', { body: { email: target, code: code.trim(), password } }));
    setSent('');
    form.reset();
    onChange();
  });
  const unbind = unbindForm.submit(async ({ password }) => {
    await call(api.POST('/auth/email/unbind', { body: { password } }));
    unbindForm.reset();
    onChange();
  });
  return (
    <section aria-labelledby="email-title">
      <h2 id="email-title">E-mail</h2>
      <Status
        message={email ? `${email} (${verified ? 'verified' : 'not verified'})` : 'No e-mail is bound.'}
      />
      <form onSubmit={sent ? verify : send} noValidate aria-label="Bind an e-mail">
        <Field form={form} name="email" label="E-mail to bind" type="email" autoComplete="email" />
        {sent && (
          <>
            <Status message={sent} />
            <CodeField form={form} label="E-mail code" />
            <PasswordField form={form} />
          </>
        )}
        <Submit form={form}>{sent ? 'Bind e-mail' : 'Send code'}</Submit>
      </form>
      {email && (
        <form onSubmit={unbind} noValidate class="inline" aria-label="Unbind the e-mail">
          <PasswordField form={unbindForm} />
          <Submit form={unbindForm} secondary>
            Unbind e-mail
          </Submit>
        </form>
      )}
    </section>
  );
}

function Password() {
  const form = useForm({ current_password: '', new_password: '' });
  const [done, setDone] = useState('');
  const change = form.submit(async (values) => {
    // The change ends every session, this one too, and answers a fresh one: keep using that.
    const fresh = await call(api.POST('/auth/password', { body: values }));
    session.start(fresh.token, fresh.user);
    form.reset();
    setDone('Password changed. Every other session is logged out.');
  });
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={change} noValidate>
        <PasswordField form={form} name="current_password" />
        <NewPasswordField form={form} />
        <Submit form={form}>Change password</Submit>
        {done && <Status message={done} />}
      </form>
    </section>
  );
}

export function SecurityPage() {
  const state = useLoad(() => call(api.GET('/auth/security')));
  const user = session.user();
  const secured = state.data && (state.data.totp_enabled || state.data.passkeys > 0);
  useEffect(() => {
    if (secured) session.setNeedsSecondFactor(false);
  }, [secured]);
  return (
    <Page title="Security">
      {session.needsSecondFactor() && !secured && (
        <p class="notice" role="alert">
          This service requires administrators to have a second factor. Set up TOTP or add a passkey below;
          until then nothing else is open to you.
        </p>
      )}
      {state.error && <FormError message={state.error} />}
      {state.data && (
        <>
          <Totp enabled={state.data.totp_enabled} onChange={state.reload} />
          {state.data.totp_enabled && <p>{state.data.recovery_codes_remaining} recovery codes left.</p>}
          <Passkeys onChange={state.reload} />
          <Identities />
          <Email email={state.data.email} verified={state.data.email_verified} onChange={state.reload} />
        </>
      )}
      <Password />
      <Sessions />
      <Events />
      <Export />
      {state.data && user?.role !== 'admin' && (
        <DeleteAccount
          totp={state.data.totp_enabled}
          scheduledFor={state.data.deletion_scheduled_for}
          onChange={state.reload}
        />
      )}
      {user && <p class="meta">Signed in as {user.username}.</p>}
    </Page>
  );
}
