// The back office's accounts: search, enable or disable, reset two-factor authentication, and new
// administrators. Every call needs an administrator session; the API refuses anyone else. Disabling an
// administrator or resetting another administrator's TOTP takes the acting administrator's password again.
import { useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call } from '../api/client.ts';
import { Field, PasswordField, Submit, useForm } from '../form.tsx';
import { formatBytes, ListTable, Page, Status, useLoad } from '../ui.tsx';

export function AdminAccounts() {
  const query = useForm({ q: '' });
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
  // Sent with the actions on another administrator's account (the API answers 400 without it).
  const confirm = useForm({ current_password: '' });
  const withPassword = (needed: boolean) =>
    needed && confirm.values.current_password ? { current_password: confirm.values.current_password } : {};
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
        onSubmit={query.submit(async ({ q }) => setSearch(q.trim()))}
      >
        <Field form={query} name="q" label="Username or e-mail" type="search" />
        <Submit form={query}>Search</Submit>
      </form>
      {action.view}
      <ListTable
        list={accounts}
        items={accounts.data?.items}
        columns={['Username', 'E-mail', 'Role', 'Status', 'Usage']}
        actions
        empty={search ? `No account matches "${search}".` : 'No accounts yet.'}
        hint={
          search
            ? 'The search matches the start of a username or e-mail; try fewer letters, or clear it.'
            : undefined
        }
        row={(account) => {
          const path = byId(account.id);
          const next = account.status === 'active' ? 'disabled' : 'active';
          const admin = account.role === 'admin';
          return (
            <tr key={account.id}>
              <td>{account.username}</td>
              <td>{account.email ?? '—'}</td>
              <td>{account.role}</td>
              <td>{account.status}</td>
              <td>
                {account.usage
                  ? `${formatBytes(account.usage.used_bytes)} / ${formatBytes(account.usage.quota_bytes)} · ${formatBytes(account.usage.bandwidth_bytes_used)} served this month`
                  : '—'}
              </td>
              <td class="actions">
                <ActionButton
                  action={action}
                  work={() =>
                    call(
                      api.PATCH('/api/v1/admin/accounts/{id}', {
                        ...path,
                        body: { status: next, ...withPassword(admin && next === 'disabled') },
                      }),
                    )
                  }
                  done={`${account.username} is now ${next}`}
                >
                  {account.status === 'active' ? 'Disable' : 'Enable'}
                  <span class="visually-hidden"> {account.username}</span>
                </ActionButton>
                {account.totp_enabled && (
                  <ActionButton
                    action={action}
                    work={() =>
                      call(
                        api.POST('/api/v1/admin/accounts/{id}/totp/reset', {
                          ...path,
                          body: withPassword(admin),
                        }),
                      )
                    }
                    done={`Two-factor authentication of ${account.username} reset`}
                  >
                    Reset second factor<span class="visually-hidden"> of {account.username}</span>
                  </ActionButton>
                )}
              </td>
            </tr>
          );
        }}
      />
      {/* Below the table, by the actions that need it: the search stays right above the list. */}
      <form
        class="inline"
        aria-label="Confirm administrator actions"
        onSubmit={(event) => event.preventDefault()}
      >
        <PasswordField
          form={confirm}
          name="current_password"
          label="Your password (to disable an administrator or reset their second factor)"
        />
      </form>
      <h2 id="new-admin-title">New administrator</h2>
      <form onSubmit={submitCreate} noValidate aria-labelledby="new-admin-title">
        <Field form={create} name="username" label="Username" autoComplete="off" />
        <Field form={create} name="email" label="E-mail" type="email" autoComplete="off" />
        <PasswordField form={create} label="Their password" autoComplete="new-password" />
        <PasswordField form={create} name="current_password" label="Your password" />
        <Submit form={create}>Create administrator</Submit>
        {created && <Status message={created} />}
      </form>
    </Page>
  );
}
