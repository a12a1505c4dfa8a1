// The security page's passkeys: the list, adding one (the browser makes it) and removing one, each by password.
import { useState } from 'preact/hooks';
import { api, call } from '../../api/client.ts';
import { Field, PasswordField, Submit, useForm } from '../../form.tsx';
import { createPasskey, passkeysSupported } from '../../passkey.ts';
import { FormError, formatTime, ListState, listPhase, Status, useLoad } from '../../ui.tsx';

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

export function Passkeys({ onChange }: { onChange: () => void }) {
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
