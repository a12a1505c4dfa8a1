// The security page's sign-in providers: those linked (each may be unlinked, never the last way in) and
// linking another (after the password, at the provider's own page; it comes back to `#/oauth?linked=`).
import { useState } from 'preact/hooks';
import { api, call } from '../../api/client.ts';
import { PasswordField, useForm } from '../../form.tsx';
import { FormError, formatTime, Status, useLoad } from '../../ui.tsx';

export function Identities() {
  const providers = useLoad(() => call(api.GET('/auth/providers', { params: { query: {} } })));
  const linked = useLoad(() => call(api.GET('/auth/identities')));
  const form = useForm({ current_password: '' });
  const [done, setDone] = useState('');
  const [failure, setFailure] = useState('');
  if (!providers.data?.length) return null;
  const unlinkedProviders = providers.data.filter((p) => !linked.data?.some((l) => l.provider === p.id));
  const link = (provider: string) =>
    form.submit(async ({ current_password }) => {
      const { url } = await call(
        api.POST('/auth/identities/{provider}', {
          params: { path: { provider } },
          body: { current_password },
        }),
      );
      location.assign(url);
    });
  const unlink = async (provider: string, label: string) => {
    setFailure('');
    try {
      await call(api.DELETE('/auth/identities/{provider}', { params: { path: { provider } } }));
      setDone(`${label} unlinked.`);
      await linked.reload();
    } catch (caught) {
      setFailure((caught as Error).message);
    }
  };
  return (
    <section aria-labelledby="identities-title">
      <h2 id="identities-title">Sign-in providers</h2>
      {(linked.error || failure) && <FormError message={linked.error || failure} />}
      {done && <Status message={done} />}
      <ul class="rows" aria-label="Linked sign-in providers">
        {linked.data?.map((identity) => (
          <li key={identity.provider}>
            <span>
              {identity.label}
              {identity.email ? ` (${identity.email})` : ''}, linked {formatTime(identity.linked_at)}
            </span>
            <button type="button" class="secondary" onClick={() => unlink(identity.provider, identity.label)}>
              Unlink<span class="visually-hidden"> {identity.label}</span>
            </button>
          </li>
        ))}
      </ul>
      {linked.data?.length === 0 && <p>No sign-in provider is linked.</p>}
      {unlinkedProviders.length > 0 && (
        <form onSubmit={(event) => event.preventDefault()} noValidate>
          <PasswordField form={form} name="current_password" />
          <div class="actions">
            {unlinkedProviders.map((provider) => (
              <button
                key={provider.id}
                type="button"
                class="secondary"
                disabled={form.busy}
                onClick={link(provider.id)}
              >
                Link {provider.label}
              </button>
            ))}
          </div>
          {form.formError && <FormError message={form.formError} />}
        </form>
      )}
    </section>
  );
}
