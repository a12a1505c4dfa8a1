// Security: TOTP (setup with the QR code, enable, disable, recovery codes), sessions, security events,
// passkeys, e-mail binding and password change (docs/ACCOUNTS.md).
import { useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { session } from '../api/session.ts';
import { CodeField, Field, PasswordField, Submit, useForm } from '../form.tsx';
import { createPasskey, passkeysSupported } from '../passkey.ts';
import { QrCode } from '../qr.tsx';
import {
  copyText,
  FormError,
  formatTime,
  ListState,
  listPhase,
  Notice,
  Page,
  Status,
  useLoad,
} from '../ui.tsx';

type Setup = DataOf<'/auth/totp/setup', 'post'>;

/**
 * New recovery codes, shown once: copied all at once (one a line) or downloaded as `recovery-codes.txt`
 * (a data: link, which the console's Content-Security-Policy leaves alone: it governs what the page loads,
 * not what it saves).
 */
function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState('');
  const text = `${codes.join('\n')}\n`;
  return (
    <section class="secret" aria-labelledby="recovery-title">
      <h3 id="recovery-title">Recovery codes</h3>
      <p>
        Each works once in place of an authentication code. Keep them somewhere safe: they are shown only now.
      </p>
      <ul class="codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions recovery-actions">
        <button
          type="button"
          onClick={async () =>
            setCopied(
              (await copyText(text))
                ? `${codes.length} recovery codes copied, one a line.`
                : 'Copying was refused: select the codes and copy them, or download them.',
            )
          }
        >
          Copy the codes
        </button>
        <a
          class="button secondary"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
          download="recovery-codes.txt"
        >
          Download recovery-codes.txt
        </a>
      </div>
      {copied && <Status message={copied} />}
    </section>
  );
}

function Totp({ enabled, onChange }: { enabled: boolean; onChange: () => void }) {
  const setupForm = useForm({ password: '' });
  const enableForm = useForm({ code: '' });
  const disableForm = useForm({ code: '', password: '' });
  const regenerateForm = useForm({ password: '' });
  const [setup, setSetup] = useState<Setup | null>(null);
  const [codes, setCodes] = useState<string[]>([]);

  const start = setupForm.submit(async ({ password }) => {
    setSetup(await call(api.POST('/auth/totp/setup', { body: { password } })));
    setupForm.reset();
  });
  const enable = enableForm.submit(async ({ code }) => {
    const result = await call(api.POST('/auth/totp/enable', { body: { code: code.trim() } }));
    setCodes(result.recovery_codes);
    setSetup(null);
    enableForm.reset();
    onChange();
  });
  const disable = disableForm.submit(async ({ code, password }) => {
    await call(
      api.POST('/auth/totp/disable', {
        body: { ...(code ? { code: code.trim() } : {}), ...(password ? { password } : {}) },
      }),
    );
    disableForm.reset();
    setCodes([]);
    onChange();
  });
  const regenerate = regenerateForm.submit(async ({ password }) => {
    setCodes((await call(api.POST('/auth/totp/recovery-codes', { body: { password } }))).recovery_codes);
    regenerateForm.reset();
    onChange();
  });

  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor authentication (TOTP)</h2>
      {enabled ? (
        <Notice tone="success">Two-factor authentication is on.</Notice>
      ) : (
        <Notice tone="warning">
          Two-factor authentication is off: your password alone opens your account. Set it up below.
        </Notice>
      )}
      {codes.length > 0 && <RecoveryCodes codes={codes} />}
      {!enabled && !setup && (
        <form onSubmit={start} noValidate class="inline">
          <PasswordField form={setupForm} />
          <Submit form={setupForm}>Set up</Submit>
        </form>
      )}
      {!enabled && setup && (
        <form onSubmit={enable} noValidate>
          <p>
            Scan the code with an authenticator app, or type the secret into it, then enter the code it shows.
          </p>
          <QrCode text={setup.uri} label="QR code of the authenticator secret" />
          <p>
            <a href={setup.uri}>Add it to an authenticator app on this device</a>
          </p>
          <p>
            Secret: <code id="totp-secret">{setup.secret}</code>
          </p>
          <CodeField form={enableForm} />
          <Submit form={enableForm}>Turn on</Submit>
        </form>
      )}
      {enabled && (
        <>
          <form onSubmit={disable} noValidate>
            <h3>Turn off</h3>
            <CodeField form={disableForm} />
            <PasswordField form={disableForm} label="Or the current password" />
            <Submit form={disableForm} secondary>
              Turn off
            </Submit>
          </form>
          <form onSubmit={regenerate} noValidate class="inline">
            <h3>New recovery codes</h3>
            <PasswordField form={regenerateForm} />
            <Submit form={regenerateForm} secondary>
              Make new recovery codes
            </Submit>
          </form>
        </>
      )}
    </section>
  );
}

/** One passkey's removal: its own password field, asked for once the owner chose to remove it. */
function RemovePasskey({ id, name, onDone }: { id: string; name: string; onDone: () => void }) {
  const form = useForm({ password: '' });
  const remove = form.submit(async ({ password }) => {
    await call(api.DELETE('/auth/passkeys/{id}', { params: { path: { id } }, body: { password } }));
    onDone();
  });
  return (
    <form onSubmit={remove} noValidate class="inline" aria-label={`Remove the passkey ${name}`}>
      <PasswordField form={form} />
      <Submit form={form} secondary>
        Remove<span class="visually-hidden"> passkey {name}</span>
      </Submit>
    </form>
  );
}

function Passkeys({ onChange }: { onChange: () => void }) {
  const list = useLoad(() => call(api.GET('/auth/passkeys')));
  const form = useForm({ name: '', password: '' });
  const [removing, setRemoving] = useState('');
  const [done, setDone] = useState('');
  const changed = async (message: string) => {
    setDone(message);
    setRemoving('');
    await list.reload();
    onChange();
  };
  const add = form.submit(async ({ name, password }) => {
    setDone('');
    const options = await call(api.POST('/auth/passkeys/register/options', { body: { password } }));
    const response = await createPasskey(options);
    const created = await call(
      api.POST('/auth/passkeys/register/verify', {
        body: { response, ...(name.trim() ? { name: name.trim() } : {}) },
      }),
    );
    form.reset();
    await changed(`Passkey "${created.name}" added.`);
  });
  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p>A passkey signs you in without the password, and answers the two-factor step.</p>
      {list.error && <FormError message={list.error} />}
      {done && <Status message={done} />}
      <ListState
        phase={listPhase(list, list.data?.length ?? 0)}
        rows={2}
        empty="No passkeys yet."
        hint={passkeysSupported() ? 'Add one below to sign in without the password.' : undefined}
      />
      <ul class="rows" aria-label="Your passkeys">
        {list.data?.map((row) => (
          <li key={row.id}>
            <span>
              {row.name} · added {formatTime(row.created_at)} · last used{' '}
              {row.last_used_at ? formatTime(row.last_used_at) : 'never'}
            </span>
            {removing === row.id ? (
              <RemovePasskey
                id={row.id}
                name={row.name}
                onDone={() => changed(`Passkey "${row.name}" removed.`)}
              />
            ) : (
              <button type="button" class="secondary" onClick={() => setRemoving(row.id)}>
                Remove<span class="visually-hidden"> passkey {row.name}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
      {passkeysSupported() ? (
        <form onSubmit={add} noValidate aria-label="Add a passkey">
          <Field form={form} name="name" label="Passkey name" hint="Optional, e.g. Laptop." maxLength={64} />
          <PasswordField form={form} />
          <Submit form={form}>Add a passkey</Submit>
        </form>
      ) : (
        <p>This browser cannot use passkeys.</p>
      )}
    </section>
  );
}

function Sessions() {
  const sessions = useLoad(() => call(api.GET('/auth/sessions')));
  const action = useAction(sessions.reload);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      {(action.error || sessions.error) && <FormError message={action.error || sessions.error} />}
      <ListState phase={listPhase(sessions, sessions.data?.length ?? 0)} rows={2} empty="No live sessions." />
      <ul class="rows">
        {sessions.data?.map((row) => (
          <li key={row.id}>
            <span>
              {row.user_agent ?? 'Unknown browser'} · {row.ip ?? 'unknown address'} · since{' '}
              {formatTime(row.created_at)}
              {row.current ? ' (this session)' : ''}
            </span>
            {!row.current && (
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/auth/sessions/{id}', { params: { path: { id: row.id } } }))}
              >
                Revoke<span class="visually-hidden"> session since {formatTime(row.created_at)}</span>
              </ActionButton>
            )}
          </li>
        ))}
      </ul>
      <ActionButton action={action} work={() => call(api.POST('/auth/sessions/revoke-others', { body: {} }))}>
        Log out every other session
      </ActionButton>
    </section>
  );
}

function Events() {
  const events = useLoad(() => call(api.GET('/auth/security/events')));
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Security events</h2>
      {events.error && <FormError message={events.error} />}
      <ListState
        phase={listPhase(events, events.data?.items.length ?? 0)}
        empty="No security events in the last 90 days."
      />
      <ul class="rows">
        {events.data?.items.map((event) => (
          <li key={`${event.at}-${event.type}`}>
            {formatTime(event.at)} · {event.type.replace(/_/g, ' ')} · {event.ip ?? 'unknown address'}
          </li>
        ))}
      </ul>
    </section>
  );
}

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
        <PasswordField
          form={form}
          name="new_password"
          label="New password"
          autoComplete="new-password"
          hint="At least 8 characters."
        />
        <Submit form={form}>Change password</Submit>
        {done && <Status message={done} />}
      </form>
    </section>
  );
}

export function SecurityPage() {
  const state = useLoad(() => call(api.GET('/auth/security')));
  const user = session.user();
  return (
    <Page title="Security">
      {state.error && <FormError message={state.error} />}
      {state.data && (
        <>
          <Totp enabled={state.data.totp_enabled} onChange={state.reload} />
          {state.data.totp_enabled && <p>{state.data.recovery_codes_remaining} recovery codes left.</p>}
          <Passkeys onChange={state.reload} />
          <Email email={state.data.email} verified={state.data.email_verified} onChange={state.reload} />
        </>
      )}
      <Password />
      <Sessions />
      <Events />
      {user && <p class="meta">Signed in as {user.username}.</p>}
    </Page>
  );
}
