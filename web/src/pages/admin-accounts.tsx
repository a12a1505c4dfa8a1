// The back office's accounts: search, enable or disable, reset two-factor authentication, and new
// administrators. Every call needs an administrator session; the API refuses anyone else.
import { useState } from 'preact/hooks';
import { useAction } from '../action.tsx';
import { api, call } from '../api/client.ts';
import { DataTable, Field, FormError, formatBytes, Page, Status, useForm, useLoad } from '../ui.tsx';

export function AdminAccounts() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const accounts = useLoad(
    () =>
      call(
        api.GET('/api/v1/admin/accounts', {
          params: { query: { limit: '50', ...(search ? { q: search } : {}) } },
        }),
      ),
    [search],
  );
  const action = useAction(accounts.reload);
  const create = useForm({ username: '', email: '', password: '', current_password: '' });
  const [created, setCreated] = useState('');
  const submitCreate = create.submit(async (values) => {
    setCreated('');
    await call(api.POST('/api/v1/admin/accounts', { body: values }));
    create.reset();
    setCreated(`Administrator ${values.username} created`);
    await accounts.reload();
  });
  return (
    <Page title="Accounts">
      <form
        class="inline"
        aria-label="Search accounts"
        onSubmit={(event) => {
          event.preventDefault();
          setSearch(query.trim());
        }}
      >
        <div class="field">
          <label for="account-search">Username or e-mail</label>
          <input
            id="account-search"
            type="search"
            value={query}
            onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      {accounts.error && <FormError message={accounts.error} />}
      {action.view}
      <DataTable columns={['Username', 'E-mail', 'Role', 'Status', 'Usage']} actions>
        {accounts.data?.items.map((account) => (
          <tr key={account.id}>
            <td>{account.username}</td>
            <td>{account.email ?? '—'}</td>
            <td>{account.role}</td>
            <td>{account.status}</td>
            <td>
              {account.usage
                ? `${formatBytes(account.usage.used_bytes)} / ${formatBytes(account.usage.quota_bytes)}`
                : '—'}
            </td>
            <td class="actions">
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  action.run(
                    () =>
                      call(
                        api.PATCH('/api/v1/admin/accounts/{id}', {
                          params: { path: { id: account.id } },
                          body: { status: account.status === 'active' ? 'disabled' : 'active' },
                        }),
                      ),
                    `${account.username} is now ${account.status === 'active' ? 'disabled' : 'active'}`,
                  )
                }
              >
                {account.status === 'active' ? 'Disable' : 'Enable'}
                <span class="visually-hidden"> {account.username}</span>
              </button>
              {account.totp_enabled && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    action.run(
                      () =>
                        call(
                          api.POST('/api/v1/admin/accounts/{id}/totp/reset', {
                            params: { path: { id: account.id } },
                            body: {},
                          }),
                        ),
                      `Two-factor authentication of ${account.username} reset`,
                    )
                  }
                >
                  Reset TOTP<span class="visually-hidden"> of {account.username}</span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      <h2 id="new-admin-title">New administrator</h2>
      <form onSubmit={submitCreate} noValidate aria-labelledby="new-admin-title">
        <Field form={create} name="username" label="Username" autoComplete="off" />
        <Field form={create} name="email" label="E-mail" type="email" autoComplete="off" />
        <Field
          form={create}
          name="password"
          label="Their password"
          type="password"
          autoComplete="new-password"
        />
        <Field
          form={create}
          name="current_password"
          label="Your password"
          type="password"
          autoComplete="current-password"
        />
        <button type="submit" disabled={create.busy}>
          Create administrator
        </button>
        {create.formError && <FormError message={create.formError} />}
        {created && <Status message={created} />}
      </form>
    </Page>
  );
}
